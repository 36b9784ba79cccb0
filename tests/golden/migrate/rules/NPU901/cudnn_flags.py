# rules: NPU901 NPU901 NPU901
import torch
from torch.backends import cudnn

torch.backends.cudnn.benchmark = True
cudnn.deterministic = True
torch.backends.cuda.matmul.allow_tf32 = False
