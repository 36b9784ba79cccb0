# rules:
from common import *
from torch import *  # binds torch's names, not torch: nothing here says torch.

x = zeros(2)
print("cuda")
