"""A device inventory the way serving workers take one (a loop over ``range(device_count())`` that
reads each device's properties inside ``torch.cuda.device(i)``: an empty list on a CPU host), and
RNG state saved and restored through a helper of the file's own behind an availability flag held
in an attribute. The CPU path is ``--cpu``."""

import argparse
import hashlib
import json

import torch
import torch.nn as nn


def get_gpu_memory(max_gpus=None):
    gpu_memory = []
    num_gpus = (
        torch.cuda.device_count()
        if max_gpus is None
        else min(max_gpus, torch.cuda.device_count())
    )
    for gpu_id in range(num_gpus):
        with torch.cuda.device(gpu_id):
            device = torch.cuda.current_device()
            properties = torch.cuda.get_device_properties(device)
            total = properties.total_memory / (1024**3)
            gpu_memory.append(total - torch.cuda.memory_allocated() / (1024**3))
    return gpu_memory


def _cuda_rng_state():
    return torch.cuda.get_rng_state()


def _set_cuda_rng_state(state):
    torch.cuda.set_rng_state(state)


class RngKeeper:
    def __init__(self, cpu):
        self.use_cuda = torch.cuda.is_available() and not cpu

    def round_trip(self):
        """The device generator's state saved and restored, as a checkpoint does."""
        if self.use_cuda:
            _set_cuda_rng_state(_cuda_rng_state())


parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
device = torch.device("cpu" if args.cpu or not torch.cuda.is_available() else "cuda")
inventory = get_gpu_memory()
keeper = RngKeeper(args.cpu)
torch.manual_seed(7)
model = nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.2), nn.Linear(8, 2)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
generator = torch.Generator().manual_seed(2)
losses = []
for _ in range(3):
    x = torch.randn(6, 5, generator=generator).to(device)
    y = torch.randint(0, 2, (6,), generator=generator).to(device)
    keeper.round_trip()
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(round(loss.item(), 6))
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device.type, "losses": losses, "inventory": inventory,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
