# rules: DST002 DST201 DST204 NPU001 NPU201 NPU403
# modes: distributed=main.py
# path: model.py
import torch.nn as nn

model = Net().cuda()
if n_gpus > 1:
    model = nn.DataParallel(model, device_ids=[0, 1])
# output
import torch.nn as nn
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch

model = Net().npu()
if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch_npu.npu.current_device()])
if n_gpus > 1:
    model = model
