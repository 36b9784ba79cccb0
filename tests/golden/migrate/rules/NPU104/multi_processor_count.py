# rules: NPU001 NPU101 NPU104
import torch

blocks = torch.cuda.get_device_properties(0).multi_processor_count * 4
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

blocks = torch_npu.npu.get_device_properties(0).multi_processor_count * 4
