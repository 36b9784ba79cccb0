# rules:
import torch

# backend="inductor" is torch's default
model = torch.compile(torch.nn.Linear(2, 2), backend="eager")
