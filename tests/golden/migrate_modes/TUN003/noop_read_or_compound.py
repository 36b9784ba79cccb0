# rules: NPU901 NPU901 NPU901 NPU901
# modes: tune=hf32
import torch

fast = torch.backends.cuda.matmul.allow_tf32
if fast: torch.backends.cudnn.allow_tf32 = True
