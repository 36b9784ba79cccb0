# rules: NPU404 NPU404
import torch
import torch.distributed as dist

options = dist.ProcessGroupNCCL.Options()
options.is_high_priority_stream = True
group = torch.distributed.ProcessGroupNCCL(store, 0, 1, options)
