# rules: 
# modes: portable
import torch

cuda = "a name"
x = torch.accelerator.is_available()
my.cuda.synchronize()
