# rules: NPU001 NPU302 NPU302 NPU302 NPU302 NPU302 NPU302 NPU302 NPU302
import torch


def train(model, device="cuda"):
    if x.device.type == "cuda":
        pass
    if args.device.startswith("cuda"):
        pass
    self.device = "cuda:0"
    cfg["device"] = "cuda"
    return str(device) != "cuda:1"


config = {"device": "cuda", "lr": 0.1}
DEVICE: str = "cuda"
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def train(model, device="npu"):
    if x.device.type == "npu":
        pass
    if args.device.startswith("npu"):
        pass
    self.device = "npu:0"
    cfg["device"] = "npu"
    return str(device) != "npu:1"


config = {"device": "npu", "lr": 0.1}
DEVICE: str = "npu"
