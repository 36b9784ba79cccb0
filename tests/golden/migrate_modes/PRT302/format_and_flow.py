# rules: PRT001 PRT302 PRT302
# modes: portable
import torch


def resume(path, gpu):
    loc = "cuda:{}".format(gpu)
    checkpoint = torch.load(path, map_location=loc)
    return torch.load(path, map_location="cuda:{}".format(gpu)), checkpoint
# output
import torch
import portable_device


def resume(path, gpu):
    loc = str(portable_device.device(gpu))
    checkpoint = torch.load(path, map_location=loc)
    return torch.load(path, map_location=portable_device.device(gpu)), checkpoint
