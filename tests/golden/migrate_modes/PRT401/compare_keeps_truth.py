# rules: PRT001 PRT401
# modes: portable
import torch.distributed as dist

if dist.get_backend() == "nccl":
    pass
# output
import torch.distributed as dist
import portable_device

if dist.get_backend() == (portable_device.backend() if portable_device.is_available() else "nccl"):
    pass
