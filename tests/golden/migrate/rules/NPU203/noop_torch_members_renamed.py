# rules: NPU001 NPU201 NPU202 NPU202
import torch


class Batch:
    def __init__(self, data):
        self.data = data
        self.on_gpu = data.is_cuda

    def to_gpu(self):
        self.data = self.data.cuda()
        return self.data.is_cuda
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


class Batch:
    def __init__(self, data):
        self.data = data
        self.on_gpu = data.is_npu

    def to_gpu(self):
        self.data = self.data.npu()
        return self.data.is_npu
