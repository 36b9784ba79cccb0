# rules: NPU001 NPU201 NPU201 NPU201 NPU201 SDV001 SDV003 SDV003 SDV003 SDV003
# modes: specify_device
import torch

model = Net().cuda(args.gpu)
x = x.cuda(0, non_blocking=True)
y = y.cuda(device=1)
z = z.cuda(non_blocking=True, device=2)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import os
DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))  # the device of this process
torch_npu.npu.set_device(DEVICE_ID)

model = Net().npu()
x = x.npu(non_blocking=True)
y = y.npu()
z = z.npu(non_blocking=True)
