# rules: NPU901 NPU901 NPU901 NPU901
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
tf32 = torch.backends.cudnn.benchmark
