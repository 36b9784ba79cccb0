# rules: NPU901 NPU901
# modes: portable
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.benchmark = True
