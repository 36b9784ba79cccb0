# rules: 
# modes: portable
import torch

model = torch.nn.parallel.DistributedDataParallel(model, device_ids=None)
