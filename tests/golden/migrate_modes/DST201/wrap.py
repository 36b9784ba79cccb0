# rules: DST201 NPU001 NPU201
# modes: distributed=main.py:self.net
# path: trainer.py
import torch


class Trainer:
    def __init__(self):
        self.net = Net()
        self.net.cuda()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


class Trainer:
    def __init__(self):
        self.net = Net()
        self.net.npu()
        if not isinstance(self.net, torch.nn.parallel.DistributedDataParallel):
            self.net = torch.nn.parallel.DistributedDataParallel(self.net, device_ids=[torch_npu.npu.current_device()])
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
