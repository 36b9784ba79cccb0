# rules: NPU001 NPU101 NPU101 NPU201 NPU202 NPU203 NPU203 NPU203 NPU203 NPU301 NPU302
import torch


class PrefetchLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.is_cuda = torch.cuda.is_available() and device.type == "cuda"

    def __iter__(self):
        if self.is_cuda:
            stream = torch.cuda.Stream()
        for x in self.loader:
            if x.is_cuda:
                yield x
            yield x.cuda()


class Holder:
    def cuda(self):
        return self

    def prepare(self):
        return self.cuda()


loader = PrefetchLoader([], torch.device("cuda"))
print(loader.is_cuda)
h = Holder()
h.cuda()

# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


class PrefetchLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.is_cuda = torch_npu.npu.is_available() and device.type == "npu"

    def __iter__(self):
        if self.is_cuda:
            stream = torch_npu.npu.Stream()
        for x in self.loader:
            if x.is_npu:
                yield x
            yield x.npu()


class Holder:
    def cuda(self):
        return self

    def prepare(self):
        return self.cuda()


loader = PrefetchLoader([], torch.device("npu"))
print(loader.is_cuda)
h = Holder()
h.cuda()

