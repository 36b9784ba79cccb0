# rules: PRT001 PRT101 PRT301 PRT301 PRT302 PRT302
# modes: portable
import os

import torch

ddp_local_rank = int(os.environ["LOCAL_RANK"])
device = f'cuda:{ddp_local_rank}'
torch.cuda.set_device(device)
device_type = 'cuda' if 'cuda' in device else 'cpu'
checkpoint = torch.load("ckpt.pt", map_location=device)
home = "cuda:0"
state = torch.load("state.pt", map_location=home)
print(f"cuda:{ddp_local_rank} is {device}")
# output
import os

import torch
import portable_device

ddp_local_rank = int(os.environ["LOCAL_RANK"])
device = str(portable_device.device(ddp_local_rank))
portable_device.set_device(device)
device_type = portable_device.device_type() if (portable_device.device_type() if portable_device.is_available() else 'cuda') in device else 'cpu'
checkpoint = torch.load("ckpt.pt", map_location=device)
home = str(portable_device.device(0))
state = torch.load("state.pt", map_location=home)
print(f"cuda:{ddp_local_rank} is {device}")
