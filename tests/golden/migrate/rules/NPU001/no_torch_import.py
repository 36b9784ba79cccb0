# rules: NPU001 NPU101
"""Helpers that synchronise."""
from __future__ import annotations


def sync():
    import torch
    torch.cuda.synchronize()
# output
"""Helpers that synchronise."""
from __future__ import annotations
import torch_npu


def sync():
    import torch
    torch_npu.npu.synchronize()
