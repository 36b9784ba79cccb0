# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT103
# modes: portable
import torch
from torch.cuda import amp

if torch.cuda.is_available():
    torch.cuda.set_device(0)
n = torch.cuda.device_count()
torch.cuda.manual_seed_all(1)
start = torch.cuda.Event(enable_timing=True)
stream = torch.cuda.Stream()
torch.cuda.empty_cache()
used = torch.cuda.memory_allocated()
x = torch.cuda.LongTensor([1, 2])
with amp.autocast():
    pass
# output
import torch
from torch import amp
import portable_device

if torch.accelerator.is_available():
    portable_device.set_device(0)
n = portable_device.device_count()
portable_device.manual_seed_all(1)
start = portable_device.Event(enable_timing=True)
stream = portable_device.module().Stream()
portable_device.empty_cache()
used = portable_device.memory_allocated()
x = portable_device.LongTensor([1, 2])
with amp.autocast(portable_device.device_type()):
    pass
