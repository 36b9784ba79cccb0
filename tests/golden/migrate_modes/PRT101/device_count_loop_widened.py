# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101
# modes: portable
import torch

for i in range(torch.cuda.device_count()):
    torch.cuda.set_device(i)
    torch.cuda.empty_cache()
used = [torch.cuda.memory_allocated(i) for i in range(torch.cuda.device_count())]
# output
import torch
import portable_device

for i in range(portable_device.device_count()):
    portable_device.set_device(i)
    portable_device.empty_cache()
used = [portable_device.memory_allocated(i) for i in range(portable_device.device_count())]
