# rules: PRT503 PRT503 PRT503 PRT503
# modes: portable
import torch
from apex.normalization import FusedLayerNorm
from apex.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.Sequential(FusedLayerNorm(8)))
# output
import torch

model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(torch.nn.LayerNorm(8)))
