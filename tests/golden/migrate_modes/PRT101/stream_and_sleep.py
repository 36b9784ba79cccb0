# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101
# modes: portable
import torch


def overlap(cycles):
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(cycles)
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
# output
import torch
import portable_device


def overlap(cycles):
    side = portable_device.module().Stream()
    with portable_device.module().stream(side):
        portable_device.device_sleep(cycles)
    assert portable_device.module().current_stream() == portable_device.default_stream()
