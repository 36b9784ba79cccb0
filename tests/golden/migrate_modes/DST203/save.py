# rules: DST203 NPU001
# modes: distributed=main.py
# path: ckpt.py
import torch


def save(state, path):
    torch.save(state, path)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def save(state, path):
    if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:
        torch.save(state, path)
