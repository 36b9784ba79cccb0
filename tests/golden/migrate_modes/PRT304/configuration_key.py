# rules: PRT001 PRT304
# modes: portable
import torch


def setup(cfg, model):
    device = cfg["device"]
    print(torch.version.cuda)
    return model.to(device)
# output
import torch
import portable_device


def setup(cfg, model):
    device = portable_device.given_device(cfg["device"], 'cfg["device"]')
    print(torch.version.cuda)
    return model.to(device)
