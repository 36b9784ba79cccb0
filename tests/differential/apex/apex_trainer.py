"""A trainer on apex's fused optimizers and norms, as NVIDIA's examples use them. ``--reference``
builds the same model and updates with torch's own classes on the CPU; the migrated trainer must
print the reference's losses."""

import json
import sys

import torch
import torch.nn.functional as F
from apex.normalization import FusedLayerNorm, FusedRMSNorm
from apex.optimizers import FusedAdam, FusedSGD

reference = "--reference" in sys.argv
device = "cpu" if reference else "cuda"


def build(norm, rms):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(8, 16), norm, torch.nn.ReLU(), rms, torch.nn.Linear(16, 3)]
    return torch.nn.Sequential(*layers).to(device)


def train(model, optimizer):
    generator = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(6):
        inputs = torch.randn(4, 8, generator=generator).to(device)
        targets = torch.randint(0, 3, (4,), generator=generator).to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


if reference:
    adam_model = build(torch.nn.LayerNorm(16), torch.nn.RMSNorm(16, eps=1e-5))
    adam = torch.optim.AdamW(adam_model.parameters(), lr=1e-2, weight_decay=0.0)
    sgd_model = build(torch.nn.LayerNorm(16, eps=1e-6), torch.nn.RMSNorm(16, eps=1e-5))
    sgd = torch.optim.SGD(sgd_model.parameters(), 0.1, momentum=0.9)
else:
    adam_model = build(FusedLayerNorm(16), FusedRMSNorm(16))
    adam = FusedAdam(adam_model.parameters(), lr=1e-2)
    sgd_model = build(FusedLayerNorm(16, eps=1e-6), FusedRMSNorm(16))
    sgd = FusedSGD(sgd_model.parameters(), 0.1, momentum=0.9)
print(json.dumps({"adam": train(adam_model, adam), "sgd": train(sgd_model, sgd)}))
