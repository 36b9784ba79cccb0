"""The project's device helpers (the shape of FD-GAN's and of serving code's utilities)."""

import torch


def select_device(gpu):
    if gpu is not None and torch.cuda.is_available():
        return gpu
    return "cpu"


def state_dict_to_device(state_dict, device):
    return {key: value.to(device) for key, value in state_dict.items()}


def move(value, where):
    """A tensor, or a dict of them, on ``where`` (a name that says nothing of devices)."""
    if isinstance(value, dict):
        return {key: move(item, where) for key, item in value.items()}
    return value.to(where)
