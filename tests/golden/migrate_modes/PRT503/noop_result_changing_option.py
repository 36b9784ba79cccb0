# rules: PRT504
# modes: portable
from apex.parallel import DistributedDataParallel as DDP

model = DDP(net, allreduce_always_fp32=True)
