# rules:
import torch.distributed as dist

group = dist.ProcessGroupGloo(store, 0, 1)  # instead of NCCL
