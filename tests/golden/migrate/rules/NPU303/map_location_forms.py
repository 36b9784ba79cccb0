# rules: NPU001 NPU201 NPU301 NPU303 NPU303 NPU303
import torch

a = torch.load(path, map_location="cuda:0")
b = torch.load(path, "cuda")
c = torch.load(path, map_location={"cuda:1": "cuda:0"})
d = torch.load(path, map_location=torch.device("cuda"))
e = torch.load(path, map_location=lambda storage, loc: storage.cuda(rank))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

a = torch.load(path, map_location="npu:0")
b = torch.load(path, "npu")
c = torch.load(path, map_location={"cuda:1": "npu:0"})
d = torch.load(path, map_location=torch.device("npu"))
e = torch.load(path, map_location=lambda storage, loc: storage.npu(rank))
