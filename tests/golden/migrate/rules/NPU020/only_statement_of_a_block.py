# rules: NPU020 NPU020 NPU020
import torch

try:
    from apex.optimizers import FusedAdam
except ImportError:
    raise SystemExit("this trainer needs apex")

optimizer = FusedAdam(torch.nn.Linear(2, 2).parameters(), lr=1e-3)
# output
import torch
import torch_npu.optim

try:
    pass
except ImportError:
    raise SystemExit("this trainer needs apex")

optimizer = torch_npu.optim.NpuFusedAdamW(torch.nn.Linear(2, 2).parameters(), lr=1e-3, weight_decay=0.0)
