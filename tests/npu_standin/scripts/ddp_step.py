"""DDP training steps under torchrun on argv[1] ("cpu" with gloo, "npu" with hccl); rank 0 prints."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

kind = sys.argv[1]
local_rank = int(os.environ["LOCAL_RANK"])
if kind == "npu":
    import torch_npu  # noqa: F401

    torch.npu.set_device(local_rank)
    device = torch.device("npu", local_rank)
    dist.init_process_group("hccl", device_id=device)
    dist.barrier(device_ids=[local_rank])
else:
    device = torch.device("cpu")
    dist.init_process_group("gloo")
    dist.barrier()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
ids = [local_rank] if kind == "npu" else None
model = DistributedDataParallel(model.to(device), device_ids=ids)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
torch.manual_seed(1 + dist.get_rank())
inputs, targets = torch.randn(16, 4).to(device), torch.randn(16, 1).to(device)
for _ in range(3):
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    if dist.get_rank() == 0:
        print("loss", total.item().hex())
if dist.get_rank() == 0:
    print("backend", dist.get_backend())
    print("weights", [p.sum().item().hex() for p in model.parameters()])
dist.destroy_process_group()
