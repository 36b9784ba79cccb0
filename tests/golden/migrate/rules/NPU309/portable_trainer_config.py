# rules: NPU309
# modes: portable
import torch


def setup(cfg, model):
    device = cfg["device"]
    print(torch.version.cuda)
    return model.to(device)
