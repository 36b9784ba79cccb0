"""The legacy script of projects/legacy written by hand for the CPU."""

import json

import torch

torch.manual_seed(0)

weights = torch.tensor([[0.5, -0.2], [0.1, 0.3]], requires_grad=True)
inputs = torch.randn(16, 2)
targets = torch.randn(16, 2)

for _ in range(20):
    loss = ((inputs.mm(weights) - targets) ** 2).mean()
    loss.backward()
    weights.data -= 0.1 * weights.grad.data
    weights.grad.data.zero_()

print(json.dumps({"loss": loss.item(), "on_gpu_is_bool": True}))
