# rules: DST201 NPU001 NPU003 NPU022 NPU201
# modes: distributed=main.py
# path: trainer.py
import torch
from apex import amp

model = Net().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.amp:
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
train(model, optimizer)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from apex import amp

model = Net().npu()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.amp:
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
model = model.npu()
if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch_npu.npu.current_device()])
train(model, optimizer)
