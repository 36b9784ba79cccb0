# rules: NPU001 NPU101 NPU102 NPU102
import torch
from torch.cuda.memory import CUDAPluggableAllocator


def use_uvm(path):
    allocator = CUDAPluggableAllocator(path, "uvm_malloc", "uvm_free")
    pool = torch.cuda.memory.MemPool(allocator.allocator())
    return pool, torch.cuda.memory.CUDAPluggableAllocator
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.cuda.memory import CUDAPluggableAllocator


def use_uvm(path):
    allocator = torch_npu.npu.memory.NPUPluggableAllocator(path, "uvm_malloc", "uvm_free")
    pool = torch_npu.npu.memory.MemPool(allocator.allocator())
    return pool, torch_npu.npu.memory.NPUPluggableAllocator
