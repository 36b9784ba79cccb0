# rules: PRT001 PRT101 PRT103
# modes: portable
from torch.cuda.amp import autocast

with autocast(True):
    pass
# output
from torch.amp import autocast
import portable_device

with autocast(portable_device.device_type(), enabled=True):
    pass
