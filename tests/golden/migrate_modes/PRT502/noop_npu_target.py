# rules: NPU003 NPU022
from apex.optimizers import FusedAdam

adam = FusedAdam(params, lr=1e-3, bias_correction=False)
