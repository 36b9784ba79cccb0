# rules: DST002 DST201 NPU001
# modes: distributed=main.py
# path: model.py
import torch.nn as nn

model = Net()
# output
import torch.nn as nn
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch

model = Net()
model = model.npu()
if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch_npu.npu.current_device()])
