# rules: PRT101 PRT104
# modes: portable
from torch.cuda.amp import autocast

with autocast(*options):
    pass
# output
from torch.amp import autocast

with autocast(*options):
    pass
