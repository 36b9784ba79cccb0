# rules: NPU001 NPU201 NPU301 NPU306
import torch
from utils import select_device


class Model:
    def __init__(self, opt):
        self.device = select_device(opt.gpu_ids)
        self.net = torch.nn.Linear(2, 2).cuda()

    def forward(self, batch, other):
        batch = batch.to(self.device)
        device = torch.device("cuda")
        return self.net(batch), other.to(device)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from utils import select_device


class Model:
    def __init__(self, opt):
        self.device = select_device(opt.gpu_ids)
        self.net = torch.nn.Linear(2, 2).npu()

    def forward(self, batch, other):
        batch = batch.to(f"npu:{self.device}" if isinstance(self.device, int) else self.device)
        device = torch.device("npu")
        return self.net(batch), other.to(device)
