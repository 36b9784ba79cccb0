# rules: NPU001 NPU101 NPU101 NPU101 NPU101 NPU101
import torch as th
import torch.cuda as tc
from torch import cuda
CD = th.cuda

if th.cuda.is_available():
    th.cuda.set_device(0)
tc.synchronize()
n = cuda.device_count()
CD.empty_cache()
# output
import torch as th
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch.cuda as tc
from torch import cuda
CD = th.cuda

if torch_npu.npu.is_available():
    torch_npu.npu.set_device(0)
torch_npu.npu.synchronize()
n = torch_npu.npu.device_count()
torch_npu.npu.empty_cache()
