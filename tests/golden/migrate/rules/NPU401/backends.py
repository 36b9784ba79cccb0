# rules: NPU001 NPU401 NPU401 NPU401 NPU401 NPU401 NPU401
import torch.distributed as dist
from torch.distributed import init_process_group


def setup(backend="nccl"):
    init_process_group("nccl", rank=0, world_size=1)
    dist.init_process_group(backend="cuda:nccl,cpu:gloo")
    group = dist.new_group([0, 1], backend="NCCL")
    if dist.get_backend() == "nccl":
        pass
    args.dist_backend = "nccl"
# output
import torch.distributed as dist
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.distributed import init_process_group


def setup(backend="hccl"):
    init_process_group("hccl", rank=0, world_size=1)
    dist.init_process_group(backend="npu:hccl,cpu:gloo")
    group = dist.new_group([0, 1], backend="HCCL")
    if dist.get_backend() == "hccl":
        pass
    args.dist_backend = "hccl"
