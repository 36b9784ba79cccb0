# rules:
import torch.distributed as dist

print("nccl is slow here")
dist.init_process_group("gloo")
url = "nccl"
