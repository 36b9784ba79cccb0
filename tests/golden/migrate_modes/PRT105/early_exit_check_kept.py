# rules: PRT102 PRT102 PRT105 PRT105
# modes: portable
import torch


def tf32_capable(device):
    if device.type != "cuda":
        return False
    return torch.cuda.get_device_capability(device)[0] >= 8


def bf16_capable():
    if not torch.cuda.is_available():
        raise RuntimeError("needs a GPU")
    return torch.cuda.get_device_properties(0).major >= 8
