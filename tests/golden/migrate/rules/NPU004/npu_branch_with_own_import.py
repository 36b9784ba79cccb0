# rules: NPU001 NPU004 NPU101 NPU101
import torch


def pick(use_npu):
    """Choose the device."""
    if use_npu:
        import torch_npu

        return torch_npu.npu.current_device()
    torch.cuda.set_device(0)
    return torch.cuda.current_device()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def pick(use_npu):
    """Choose the device."""
    import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
    if use_npu:
        import torch_npu

        return torch_npu.npu.current_device()
    torch_npu.npu.set_device(0)
    return torch_npu.npu.current_device()
