"""A trainer whose device handling lives in the project's helpers (utils.py): select_device
answers a CUDA index (an int) or "cpu", state_dict_to_device takes a device string, and move takes
one by position or by its keyword (its parameter is not named for devices). It prints one JSON
line: the losses."""

import argparse
import json

import torch
from utils import move, select_device, state_dict_to_device

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=None)
args = parser.parse_args()
device = select_device(args.gpu)
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
state = state_dict_to_device(model.state_dict(), "cuda" if args.gpu is not None else "cpu")
model.load_state_dict(state)
model = model.to(device)
generator = torch.Generator().manual_seed(1)
losses = []
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    inputs = move(torch.rand(5, 4, generator=generator), "cuda" if args.gpu is not None else "cpu")
    batch = move(
        {"target": torch.rand(5, 2, generator=generator)},
        where="cuda" if args.gpu is not None else "cpu",
    )
    loss = (model(inputs) - batch["target"]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print(json.dumps({"losses": losses}))
