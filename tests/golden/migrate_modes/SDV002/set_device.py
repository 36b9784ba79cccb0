# rules: PRT001 PRT101 SDV001 SDV002
# modes: specify_device portable
import torch

torch.cuda.set_device(args.gpu)
# output
import torch
import portable_device
import os
DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))  # the device of this process
portable_device.set_device(DEVICE_ID)

portable_device.set_device(DEVICE_ID)
