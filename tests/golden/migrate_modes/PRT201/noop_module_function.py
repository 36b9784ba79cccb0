# rules: 
# modes: portable
import torch

model = Net().to(device)
is_there = torch.cuda
