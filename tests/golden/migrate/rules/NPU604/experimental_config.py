# rules: NPU001 NPU601 NPU604
import torch

config = torch._C._profiler._ExperimentalConfig(verbose=True)
with torch.profiler.profile(experimental_config=config) as prof:
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

config = torch._C._profiler._ExperimentalConfig(verbose=True)
with torch_npu.profiler.profile(experimental_config=config) as prof:
    pass
