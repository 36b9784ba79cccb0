# rules: NPU308
# modes:
import torch
from library import prepare

model = prepare(torch.nn.Linear(2, 2), "cuda")
