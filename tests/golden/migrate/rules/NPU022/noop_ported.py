# rules: NPU021 NPU021 NPU021
from apex.normalization import FusedLayerNorm

norm = FusedLayerNorm(8)
# output
import torch

norm = torch.nn.LayerNorm(8)
