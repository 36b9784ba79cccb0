# rules: NPU001 NPU903
import torch

torch.backends.cuda.cufft_plan_cache.clear()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

torch_npu.npu.backends.fft_plan_cache.clear()
