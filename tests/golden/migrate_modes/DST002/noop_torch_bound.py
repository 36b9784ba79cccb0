# rules: 
# modes: distributed=main.py
# path: model.py
import torch as th

model = th.nn.parallel.DistributedDataParallel(model)
