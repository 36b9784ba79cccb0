# rules: PRT001 PRT102 PRT105 PRT301
# modes: portable
import torch

use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device("cuda" if use_cuda else "cpu")
if use_cuda:
    print(torch.cuda.get_device_properties(0))
# output
import torch
import portable_device

use_cuda = not args.no_cuda and torch.cuda.is_available()
device = torch.device(portable_device.device_type() if use_cuda else "cpu")
if use_cuda:
    print(torch.cuda.get_device_properties(0))
