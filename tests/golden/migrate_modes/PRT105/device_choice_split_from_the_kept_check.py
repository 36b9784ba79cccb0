# rules: NPU203 NPU203 NPU203 PRT001 PRT101 PRT101 PRT102 PRT105 PRT201 PRT301
# modes: portable
import torch


class Trainer:
    def __init__(self, model):
        self.cuda = torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")
        self.model = model.to(self.device)
        if self.cuda:
            self.capability = torch.cuda.get_device_capability()

    def step(self, x):
        if self.cuda:
            x = x.cuda()
        return self.model(x)
# output
import torch
import portable_device


class Trainer:
    def __init__(self, model):
        self.cuda = torch.cuda.is_available()
        self.device = torch.device(portable_device.device_type() if torch.accelerator.is_available() else "cpu")
        self.model = model.to(self.device)
        if self.cuda:
            self.capability = torch.cuda.get_device_capability()

    def step(self, x):
        if torch.accelerator.is_available():
            x = x.to(portable_device.device())
        return self.model(x)
