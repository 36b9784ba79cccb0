# rules: PRT001 PRT101 PRT101 PRT101
# modes: portable
import torch


def peak(rank):
    return torch.cuda.memory_stats(rank)["allocated_bytes.all.peak"]


def seeded():
    return torch.cuda.initial_seed(), torch.cuda.random.initial_seed()
# output
import torch
import portable_device


def peak(rank):
    return portable_device.memory_stats(rank)["allocated_bytes.all.peak"]


def seeded():
    return portable_device.initial_seed(), portable_device.initial_seed()
