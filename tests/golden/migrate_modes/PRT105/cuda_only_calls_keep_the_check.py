# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT102 PRT102 PRT105 PRT105
# modes: portable
import torch

if torch.cuda.is_available():
    cap = torch.cuda.get_device_capability(0)
use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
if torch.cuda.is_available():
    free, total = torch.cuda.mem_get_info()
    stats = torch.cuda.memory_stats(torch.cuda.current_device())
big = torch.cuda.is_available() and torch.cuda.mem_get_info()[1] > 2**34
# output
import torch
import portable_device

if torch.cuda.is_available():
    cap = torch.cuda.get_device_capability(0)
use_bf16 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8
if torch.accelerator.is_available():
    free, total = portable_device.module().mem_get_info()
    stats = portable_device.memory_stats(portable_device.current_device())
big = torch.accelerator.is_available() and portable_device.module().mem_get_info()[1] > 2**34
