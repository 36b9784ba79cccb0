# rules: NPU001 NPU101 NPU101 NPU101 NPU101 NPU102 NPU102 NPU102 NPU105 NPU105 NPU105 NPU105 NPU105
import torch as th

use_bf16 = th.cuda.is_available() and th.cuda.get_device_capability(0)[0] >= 8
cap = th.cuda.get_device_capability(th.cuda.current_device())
if th.cuda.get_device_properties(0).major >= 8 and th.cuda.get_device_properties(0).minor:
    pass
flash = th.cuda.get_device_capability() in [(8, 0), (9, 0)]
# output
import torch as th
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

use_bf16 = torch_npu.npu.is_available() and (torch_npu.npu.get_device_capability(0) or (0, 0))[0] >= 8
cap = (torch_npu.npu.get_device_capability(torch_npu.npu.current_device()) or (0, 0))
if getattr(torch_npu.npu.get_device_properties(0), "major", 0) >= 8 and getattr(torch_npu.npu.get_device_properties(0), "minor", 0):
    pass
flash = (torch_npu.npu.get_device_capability() or (0, 0)) in [(8, 0), (9, 0)]
