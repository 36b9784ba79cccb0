# rules:
# modes: tune=all
import torch_npu

config = torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level0)
with torch_npu.profiler.profile(experimental_config=config) as prof:
    pass
