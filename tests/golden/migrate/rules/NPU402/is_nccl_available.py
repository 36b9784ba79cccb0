# rules: NPU001 NPU402
import torch.distributed as dist

if dist.is_nccl_available():
    pass
# output
import torch.distributed as dist
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

if torch_npu.distributed.is_hccl_available():
    pass
