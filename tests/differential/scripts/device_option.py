"""A trainer whose device is a command-line option (``--device cuda``, the default ``cpu``), read into
a name and handed to a trainer class through its configuration, the way minGPT-style trainers take
it. The CPU path is ``--device cpu``."""

import argparse
import hashlib
import json
from types import SimpleNamespace

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, config, model):
        self.device = config.device
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        loss = nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return round(loss.item(), 6)


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cpu", choices=["cuda", "cpu"])
args = parser.parse_args()
device = args.device
torch.manual_seed(11)
trainer = Trainer(SimpleNamespace(device=device), nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1)))
generator = torch.Generator().manual_seed(4)
losses = []
for _ in range(3):
    x = torch.randn(4, 3, generator=generator)
    losses.append(trainer.step(x, x.sum(1, keepdim=True)))
weights = repr([p.detach().cpu().tolist() for p in trainer.model.parameters()])
on = torch.device(trainer.device).type
print(json.dumps({"device": on, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
