# rules:
from torch.nn.parallel import DistributedDataParallel

model = DistributedDataParallel(model)
