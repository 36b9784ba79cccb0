# rules: NPU001 NPU201 RPL002 RPL003
# modes: replace
"""Doc."""
from __future__ import annotations

import torch

rates = torch.poisson(counts.cuda())
# output
"""Doc."""
from __future__ import annotations

import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import ascend_function

rates = ascend_function.poisson(counts.npu())
