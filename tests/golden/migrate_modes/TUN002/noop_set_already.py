# rules:
# modes: tune=internal-format
import torch
import torch_npu

torch_npu.npu.config.allow_internal_format = True
torch.nn.Linear(2, 2).npu()
