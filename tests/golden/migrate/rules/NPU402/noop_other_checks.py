# rules:
import torch.distributed as dist

ok = dist.is_gloo_available() or has_nccl
