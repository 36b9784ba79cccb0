# rules: NPU001 NPU301 NPU301 NPU301 NPU301 NPU301 NPU301 NPU301 NPU301
import torch
import torch.distributed as dist

a = torch.zeros(3, device="cuda")
b = torch.device("cuda", rank)
c = torch.device(f"cuda:{rank}")
d = x.to('cuda:0', non_blocking=True)
e = torch.device("cuda:{}".format(rank))
f = torch.ones(2, device="cuda:" + str(rank))
g = make(device="cuda" if ok else "cpu")
mesh = dist.init_device_mesh("cuda", (2, 4))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch.distributed as dist

a = torch.zeros(3, device="npu")
b = torch.device("npu", rank)
c = torch.device(f"npu:{rank}")
d = x.to('npu:0', non_blocking=True)
e = torch.device("npu:{}".format(rank))
f = torch.ones(2, device="npu:" + str(rank))
g = make(device="npu" if ok else "cpu")
mesh = dist.init_device_mesh("npu", (2, 4))
