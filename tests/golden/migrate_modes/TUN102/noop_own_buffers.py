# rules:
# modes: tune=all
import torch
from torch.nn.parallel import DistributedDataParallel as DDP


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(1))


model = DDP(Counter())
again = DDP(torch.nn.Linear(2, 2), broadcast_buffers=True)
