# A Python 2 script: cannot be parsed, copied unchanged.
import torch
print "using cuda", torch.cuda.is_available()
