# rules: NPU103 NPU103
import torch

moved = list(map(torch.Tensor.cuda, batch))
apply(model, torch.nn.Module.cuda)
