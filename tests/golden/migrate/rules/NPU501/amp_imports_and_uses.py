# rules: NPU001 NPU501 NPU501 NPU501 NPU501
import torch
from torch.cuda.amp import autocast, GradScaler
from torch.cuda import amp

scaler = torch.cuda.amp.GradScaler()
with amp.autocast():
    pass
dtype = torch.get_autocast_gpu_dtype()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch_npu.npu.amp import autocast, GradScaler
from torch_npu.npu import amp

scaler = torch_npu.npu.amp.GradScaler()
with amp.autocast():
    pass
dtype = torch_npu.npu.get_autocast_dtype()
