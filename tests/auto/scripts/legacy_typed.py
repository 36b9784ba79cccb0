"""Old-style CUDA code: legacy typed tensors (torch.cuda.FloatTensor/LongTensor/DoubleTensor), Variable,
.cuda() everywhere, .type(torch.cuda.FloatTensor), is_cuda checks. Unmodified CUDA code."""

import numpy as np
import torch
from torch.autograd import Variable

torch.manual_seed(0)
rng = np.random.RandomState(0)
features_np = rng.randn(128, 10).astype(np.float32)
labels_np = (features_np @ rng.randn(10) > 0).astype(np.int64)

features = Variable(torch.cuda.FloatTensor(features_np))
labels = Variable(torch.cuda.LongTensor(labels_np))
weight = Variable(torch.randn(10, 2).type(torch.cuda.FloatTensor), requires_grad=True)
bias = Variable(torch.zeros(2).cuda(), requires_grad=True)
assert features.is_cuda == weight.is_cuda

running = torch.cuda.DoubleTensor([0.0])
for step in range(30):
    logits = features.mm(weight) + bias
    loss = torch.nn.functional.cross_entropy(logits, labels)
    loss.backward()
    with torch.no_grad():
        weight -= 0.5 * weight.grad
        bias -= 0.5 * bias.grad
        weight.grad.zero_()
        bias.grad.zero_()
    running += loss.detach().type(torch.cuda.DoubleTensor)
    if step % 10 == 9:
        print(f"step {step} loss {loss.item():.6f} running {running.item():.12f} {running.dtype}")
