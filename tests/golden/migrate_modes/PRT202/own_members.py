# rules: NPU203 NPU203 NPU203 NPU203 PRT001 PRT101 PRT101 PRT201 PRT202 PRT301 PRT301
# modes: portable
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
import portable_device


class PrefetchLoader:
    def __init__(self, loader, device):
        self.loader = loader
        self.is_cuda = torch.accelerator.is_available() and device.type == (portable_device.device_type() if portable_device.is_available() else "cuda")

    def __iter__(self):
        if self.is_cuda:
            stream = portable_device.module().Stream()
        for x in self.loader:
            if (x.device.type != "cpu"):
                yield x
            yield x.to(portable_device.device())


class Holder:
    def cuda(self):
        return self

    def prepare(self):
        return self.cuda()


loader = PrefetchLoader([], torch.device(portable_device.device_type()))
print(loader.is_cuda)
h = Holder()
h.cuda()

