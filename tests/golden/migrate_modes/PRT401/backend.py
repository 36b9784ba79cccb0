# rules: PRT001 PRT401 PRT401
# modes: portable
import torch.distributed as dist

dist.init_process_group("nccl", init_method="env://")
backend = "nccl"
# output
import torch.distributed as dist
import portable_device

dist.init_process_group(portable_device.backend(), init_method="env://")
backend = portable_device.backend()
