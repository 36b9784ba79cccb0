"""What ``migrate --tune`` and ``ascendify.auto``'s tuning set name on the NPU side (torch_npu 2.13.0
wheel: ``torch_npu/npu/npu_config.py``), and the torch APIs whose options the tuning rules set."""

from __future__ import annotations

SET_COMPILE_MODE = "torch_npu.npu.set_compile_mode"
ALLOW_INTERNAL_FORMAT = "torch_npu.npu.config.allow_internal_format"
DDP = "torch.nn.parallel.DistributedDataParallel"
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
