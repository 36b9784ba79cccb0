# rules: NPU203 NPU203 PRT102 PRT102 PRT105
# modes: portable
import torch


class Probe:
    def __init__(self):
        self.cuda = torch.cuda.is_available()
        if self.cuda:
            self.capability = torch.cuda.get_device_capability()

    def name(self):
        return torch.cuda.get_device_properties(0).name if self.cuda else None
