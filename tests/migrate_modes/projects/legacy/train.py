"""Old-style GPU code: Variable, typed CUDA tensors, .cuda(), is_cuda, cuDNN flags, format strings."""

import json

import torch
from torch.autograd import Variable

torch.manual_seed(0)
torch.cuda.manual_seed(0)
torch.backends.cudnn.benchmark = True

weights = Variable(torch.cuda.FloatTensor([[0.5, -0.2], [0.1, 0.3]]), requires_grad=True)
inputs = torch.randn(16, 2).cuda()
targets = torch.randn(16, 2).type(torch.FloatTensor).cuda()
device_name = f"cuda:{0}"
inputs = inputs.to(device_name)
on_gpu = inputs.is_cuda

for _ in range(20):
    loss = ((inputs.mm(weights) - targets) ** 2).mean()
    loss.backward()
    weights.data -= 0.1 * weights.grad.data
    weights.grad.data.zero_()

print(json.dumps({"loss": loss.item(), "on_gpu_is_bool": isinstance(on_gpu, bool)}))
