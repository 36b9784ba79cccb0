# rules: PRT001 PRT101 PRT101 PRT102 PRT102 PRT105 PRT105 PRT105
# modes: portable
import torch


def get_gpu_memory(max_gpus=None):
    memory = []
    num_gpus = (
        torch.cuda.device_count()
        if max_gpus is None
        else min(max_gpus, torch.cuda.device_count())
    )
    for gpu_id in range(num_gpus):
        with torch.cuda.device(gpu_id):
            properties = torch.cuda.get_device_properties(gpu_id)
            memory.append(properties.total_memory - torch.cuda.memory_allocated())
    return memory


def names():
    return {i: torch.cuda.get_device_properties(i).name for i in range(torch.cuda.device_count())}
# output
import torch
import portable_device


def get_gpu_memory(max_gpus=None):
    memory = []
    num_gpus = (
        torch.cuda.device_count()
        if max_gpus is None
        else min(max_gpus, torch.cuda.device_count())
    )
    for gpu_id in range(num_gpus):
        with portable_device.device_scope(gpu_id):
            properties = torch.cuda.get_device_properties(gpu_id)
            memory.append(properties.total_memory - portable_device.memory_allocated())
    return memory


def names():
    return {i: torch.cuda.get_device_properties(i).name for i in range(torch.cuda.device_count())}
