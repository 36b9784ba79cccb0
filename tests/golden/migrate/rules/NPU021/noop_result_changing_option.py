# rules: NPU003 NPU022
from apex.parallel import DistributedDataParallel

model = DistributedDataParallel(net, gradient_predivide_factor=4.0)
