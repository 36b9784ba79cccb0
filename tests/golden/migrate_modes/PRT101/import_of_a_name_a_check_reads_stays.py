# rules: PRT101 PRT102 PRT105
# modes: portable
from torch.cuda import get_device_capability, is_available
from torch.cuda import Event


def capability():
    if is_available():
        return get_device_capability()
    return None


start = Event(enable_timing=True)
# output
from torch.cuda import get_device_capability, is_available
from portable_device import Event


def capability():
    if is_available():
        return get_device_capability()
    return None


start = Event(enable_timing=True)
