# rules: PRT001 PRT201 SDV001
# modes: specify_device portable
import torch

x = x.cuda(args.gpu, non_blocking=True)
# output
import torch
import portable_device
import os
DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))  # the device of this process
portable_device.set_device(DEVICE_ID)

x = x.to(portable_device.device(), non_blocking=True)
