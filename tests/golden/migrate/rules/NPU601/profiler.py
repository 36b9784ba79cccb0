# rules: NPU001 NPU601 NPU601 NPU601 NPU601
import torch
from torch.profiler import ProfilerActivity, record_function

with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                            schedule=torch.profiler.schedule(wait=1, active=2)) as prof:
    with record_function("step"):
        pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.profiler import ProfilerActivity, record_function

with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
                            schedule=torch_npu.profiler.schedule(wait=1, active=2)) as prof:
    with record_function("step"):
        pass
