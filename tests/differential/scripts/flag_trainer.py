"""A trainer that keeps CUDA's availability in an attribute and reads it twice: to pick its
device and move batches there, and to guard a call that exists on CUDA only (the compute
capability, to choose TF32); a probe draws inside ``torch.random.fork_rng``, which must leave the
generators as they were. Without CUDA the original trains on the CPU."""

import hashlib
import json

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model):
        self.cuda = torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")
        self.model = model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        if self.cuda:
            major, _ = torch.cuda.get_device_capability()
            torch.backends.cuda.matmul.allow_tf32 = major >= 8

    def step(self, x, y):
        if self.cuda:
            x, y = x.cuda(), y.cuda()
        with torch.random.fork_rng(device_type="cuda"):  # a probe that must not move the seed
            torch.manual_seed(0)
            torch.rand(3)
        x = nn.functional.dropout(x, 0.3)
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return round(loss.item(), 6)


torch.manual_seed(3)
trainer = Trainer(nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)))
generator = torch.Generator().manual_seed(5)
losses = []
for _ in range(3):
    x = torch.randn(5, 4, generator=generator)
    y = torch.randint(0, 3, (5,), generator=generator)
    losses.append(trainer.step(x, y))
weights = repr([p.detach().cpu().tolist() for p in trainer.model.parameters()])
print(json.dumps({"device": trainer.device.type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
