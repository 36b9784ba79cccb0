# rules: 
# modes: portable
import torch

w = x.to(dev)
y = x.to(cfg["gpu"])
z = x.to(torch.float16)
