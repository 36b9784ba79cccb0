# rules: NPU001 NPU405
import torch.distributed as dist

BACKENDS = {"cuda": "nccl", "cpu": "gloo"}
dist.init_process_group(BACKENDS[device.type])
# output
import torch.distributed as dist
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

BACKENDS = {"npu": "hccl", "cuda": "nccl", "cpu": "gloo"}
dist.init_process_group(BACKENDS[device.type])
