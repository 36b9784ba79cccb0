# rules: NPU001 USR001
# modes: rules=rules.json
from torch.cuda import synchronize

synchronize()
# output
from mylib import sync as synchronize
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

synchronize()
