# rules: PRT502 PRT502 PRT502 PRT502
# modes: portable
from apex.optimizers import FusedAdam, FusedSGD

adam = FusedAdam(params, lr=1e-3)
sgd = FusedSGD(params, 0.1, momentum=0.9, set_grad_none=True)
# output
import torch

adam = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0)
sgd = torch.optim.SGD(params, 0.1, momentum=0.9)
