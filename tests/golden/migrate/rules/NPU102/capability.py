# rules: NPU001 NPU102 NPU102 NPU105
import torch

major, minor = torch.cuda.get_device_capability()
alloc = torch.cuda.CUDAPluggableAllocator("alloc.so", "my_malloc", "my_free")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

major, minor = (torch_npu.npu.get_device_capability() or (0, 0))
alloc = torch_npu.npu.NPUPluggableAllocator("alloc.so", "my_malloc", "my_free")
