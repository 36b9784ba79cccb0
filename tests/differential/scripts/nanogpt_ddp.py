"""Distributed set-up the way nanoGPT's train.py does it: the device is a string built from the
local rank (``f"cuda:{ddp_local_rank}"``), later tested with ``"cuda" in device`` and handed to
``torch.load(map_location=device)`` when a run resumes from its checkpoint; free memory is read
inside a CUDA availability check. Started by torchrun; the CPU path is ``--cpu``."""

import argparse
import hashlib
import json
import os

import torch
import torch.nn as nn
from torch.distributed import barrier, destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
backend = "gloo" if args.cpu else "nccl"
device = "cpu" if args.cpu else "cuda"
init_process_group(backend=backend)
ddp_rank = int(os.environ["RANK"])
ddp_local_rank = int(os.environ["LOCAL_RANK"])
if not args.cpu:
    device = f"cuda:{ddp_local_rank}"
    torch.cuda.set_device(device)
device_type = "cuda" if "cuda" in device else "cpu"
if torch.cuda.is_available() and device_type == "cuda":
    free, total = torch.cuda.mem_get_info()
    assert free <= total
torch.manual_seed(1337)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)).to(device)
model = DDP(model) if device_type == "cpu" else DDP(model, device_ids=[ddp_local_rank])
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
generator = torch.Generator().manual_seed(ddp_rank)
losses = []
for _ in range(4):
    x = torch.randn(6, 8, generator=generator).to(device)
    y = torch.randint(0, 4, (6,), generator=generator).to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
torch.save(model.module.state_dict(), f"ckpt_{ddp_rank}.pt")
model.module.load_state_dict(torch.load(f"ckpt_{ddp_rank}.pt", map_location=device))
if ddp_rank == 0:
    weights = repr([p.detach().cpu().tolist() for p in model.module.parameters()])
    print(json.dumps({"device": device_type, "losses": losses,
                      "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
barrier()  # no rank tears the group down while another still uses it (gloo aborts)
destroy_process_group()
