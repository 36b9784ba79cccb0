# rules: PRT001 PRT101 PRT101 PRT101
# modes: portable
import torch

use_cuda = not args.no_cuda and torch.cuda.is_available()
if use_cuda:
    free, total = torch.cuda.mem_get_info()
    state = torch.cuda.random.get_rng_state_all()
if not use_cuda:
    raise SystemExit("needs an accelerator")
# output
import torch
import portable_device

use_cuda = not args.no_cuda and torch.accelerator.is_available()
if use_cuda:
    free, total = portable_device.module().mem_get_info()
    state = portable_device.get_rng_state_all()
if not use_cuda:
    raise SystemExit("needs an accelerator")
