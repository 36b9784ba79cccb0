# rules: NPU001 NPU101 NPU302 NPU309 NPU309
import torch


class Trainer:
    def __init__(self, config, model):
        if config.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        else:
            self.device = config.device
        self.model = model.to(self.device)


device = args.device
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


class Trainer:
    def __init__(self, config, model):
        if config.device == "auto":
            self.device = "npu" if torch_npu.npu.is_available() else "cpu"
        else:
            self.device = config.device
        self.model = model.to(self.device)


device = args.device
