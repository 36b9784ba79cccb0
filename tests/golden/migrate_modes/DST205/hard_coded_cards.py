# rules: DST205 DST205 DST205 DST205 DST205 NPU001 NPU101 NPU201 NPU301
# modes: distributed=main.py:model
# path: trainer.py
import torch

device = torch.device("cuda:0")
torch.cuda.set_device(0)
net = Net().cuda(1)
x = torch.zeros(2).to(0)
y = torch.zeros(2, device=torch.device("cuda", 1))
print("running on cuda:0")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

device = torch.device(f"npu:{torch_npu.npu.current_device()}")
torch_npu.npu.set_device(torch_npu.npu.current_device())
net = Net().npu(torch_npu.npu.current_device())
x = torch.zeros(2).to(f"npu:{torch_npu.npu.current_device()}")
y = torch.zeros(2, device=torch.device("npu", torch_npu.npu.current_device()))
print("running on cuda:0")
