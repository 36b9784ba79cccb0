# rules: 
import torch.distributed as dist

BACKENDS = {"npu": "hccl", "cuda": "nccl"}
NAMES = {"cuda": "GPU", "cpu": "CPU"}
