"""The hand-written CPU version of legacy_typed.py."""

import numpy as np
import torch
from torch.autograd import Variable

torch.manual_seed(0)
rng = np.random.RandomState(0)
features_np = rng.randn(128, 10).astype(np.float32)
labels_np = (features_np @ rng.randn(10) > 0).astype(np.int64)

features = Variable(torch.FloatTensor(features_np))
labels = Variable(torch.LongTensor(labels_np))
weight = Variable(torch.randn(10, 2).type(torch.FloatTensor), requires_grad=True)
bias = Variable(torch.zeros(2), requires_grad=True)

running = torch.DoubleTensor([0.0])
for step in range(30):
    logits = features.mm(weight) + bias
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    with torch.no_grad():
        weight -= 0.5 * weight.grad
        bias -= 0.5 * bias.grad
        weight.grad.zero_()
        bias.grad.zero_()
    running += loss.detach().type(torch.DoubleTensor)
    if step % 10 == 9:
        print(f"step {step} loss {loss.item():.6f} running {running.item():.12f} {running.dtype}")
