"""What ``migrate --tune`` and ``ascendify.auto``'s tuning set name on the NPU side (torch_npu 2.13.0
wheel: ``torch_npu/npu/npu_config.py``), and the torch APIs whose options the tuning rules set."""

from __future__ import annotations

SET_COMPILE_MODE = "torch_npu.npu.set_compile_mode"
ALLOW_INTERNAL_FORMAT = "torch_npu.npu.config.allow_internal_format"
DDP = "torch.nn.parallel.DistributedDataParallel"
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
PROFILER_PROFILES = frozenset({"torch.profiler.profile", "torch_npu.profiler.profile"})
# torch_npu 2.13.0 torch_npu/profiler/experimental_config.py: level 1 adds the CANN layer and each
# operator's AI Core metrics; PipeUtilization, its default metric, shows how busy each pipe is.
NPU_PROFILER_CONFIG = (
    "torch_npu.profiler._ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1, "
    "aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization)"
)
# Ascend's apex build (amp.initialize's combine_grad exists only there).
APEX_AMP_INITIALIZE = "apex.amp.initialize"
