# rules: NPU001 TUN104
# modes: tune=persistent-workers
import torch

loader = torch.utils.data.DataLoader(range(10), batch_size=4, num_workers=4)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

loader = torch.utils.data.DataLoader(range(10), batch_size=4, num_workers=4, persistent_workers=True)
