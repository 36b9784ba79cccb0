# rules: PRT001 PRT306 PRT306 PRT306
# modes: portable
import torch
from library import move_to_device, state_dict_to_device


def load(sd, batch, rank):
    sd = state_dict_to_device(sd, "cuda")
    batch = move_to_device(batch, "cuda:0")
    return move_to_device(batch, f"cuda:{rank}")
# output
import torch
from library import move_to_device, state_dict_to_device
import portable_device


def load(sd, batch, rank):
    sd = state_dict_to_device(sd, portable_device.device_type())
    batch = move_to_device(batch, f"{portable_device.device_type()}:0")
    return move_to_device(batch, f"{portable_device.device_type()}:{rank}")
