# rules: NPU001 NPU308 NPU308 USR003
# modes: rules=device_rules.json
import torch
from mylib import configure, prepare

configure(torch.nn.Linear(2, 2), "cuda", "cuda:1")
prepare(torch.nn.Linear(2, 2), "cuda")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from mylib import configure, prepare

configure(torch.nn.Linear(2, 2), "npu", "cuda:1")
prepare(torch.nn.Linear(2, 2), "cuda")
