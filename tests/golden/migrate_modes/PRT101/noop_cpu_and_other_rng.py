# rules:
# modes: portable
import torch
from mylib import cuda as mycuda

torch.manual_seed(0)
state = torch.get_rng_state()
torch.set_rng_state(state)
generator = torch.default_generator
other = mycuda.get_rng_state()
mycuda.manual_seed(1)
