# rules: 
# modes: distributed=main.py
# path: data.py
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

train = DataLoader(train_set, sampler=DistributedSampler(train_set))
