# rules: NPU001 USR003 USR003 USR003 USR003
# modes: rules=rules.json
import torch
from torch.utils.data import DataLoader

a = torch.load(path)
b = torch.load(path, "cuda:0")
c = torch.load(path, map_location="cuda:0", weights_only=True)
loader = DataLoader(ds, batch_size=4, pin_memory=True)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.utils.data import DataLoader

a = torch.load(path, map_location="cpu")
b = torch.load(path, "cpu")
c = torch.load(path, map_location="cpu", weights_only=True)
loader = DataLoader(ds, batch_size=4)
