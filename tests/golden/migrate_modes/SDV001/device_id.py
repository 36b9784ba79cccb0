# rules: NPU001 NPU201 SDV001
# modes: specify_device
import os
import torch

x = torch.ones(1).cuda()
# output
import os
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))  # the device of this process
torch_npu.npu.set_device(DEVICE_ID)

x = torch.ones(1).npu()
