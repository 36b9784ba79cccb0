# rules: NPU001 NPU002 NPU003
import torch
import amp_C
from apex.multi_tensor_apply import multi_tensor_applier as mta
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from apex.multi_tensor_apply import multi_tensor_applier as mta
