# rules: NPU001 USR001 USR004
# modes: rules=rules.json
import torch as th

th.cuda.synchronize()
# output
import torch as th
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import mylib

mylib.sync()
