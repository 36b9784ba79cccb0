# rules: NPU001 NPU101
"""Helpers that synchronise."""
from __future__ import annotations


def sync():
    import torch
    torch.cuda.synchronize()
# output
"""Helpers that synchronise."""
from __future__ import annotations
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def sync():
    import torch
    torch_npu.npu.synchronize()
