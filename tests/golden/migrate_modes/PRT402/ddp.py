# rules: PRT001 PRT402 PRT402
# modes: portable
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank], output_device=rank)
# output
from torch.nn.parallel import DistributedDataParallel as DDP
import portable_device

model = DDP(model, device_ids=portable_device.device_ids([rank]), output_device=portable_device.device_ids(rank))
