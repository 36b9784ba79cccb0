"""A trainer whose device handling lives in the project's helpers (utils.py): select_device
answers a CUDA index (an int) or "cpu", state_dict_to_device takes a device string. It prints one
JSON line: the losses."""

import argparse
import json

import torch
from utils import select_device, state_dict_to_device

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
    inputs = torch.rand(5, 4, generator=generator).to(device)
    loss = model(inputs).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print(json.dumps({"losses": losses}))
