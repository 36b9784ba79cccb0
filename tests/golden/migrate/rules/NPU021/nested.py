# rules: NPU003 NPU021 NPU021 NPU021 NPU021 NPU022
import apex
from apex.normalization import FusedLayerNorm

model = apex.parallel.DistributedDataParallel(Net(FusedLayerNorm(8), apex.contrib.Helper()))
# output
import apex
import torch

model = torch.nn.parallel.DistributedDataParallel(Net(torch.nn.LayerNorm(8), apex.contrib.Helper()))
