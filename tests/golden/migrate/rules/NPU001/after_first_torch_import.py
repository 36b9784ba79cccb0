# rules: NPU001 NPU201
"""Module docstring."""
from __future__ import annotations

import os
import torch.nn as nn
import torch

x = nn.Linear(2, 2).cuda()
# output
"""Module docstring."""
from __future__ import annotations

import os
import torch.nn as nn
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch

x = nn.Linear(2, 2).npu()
