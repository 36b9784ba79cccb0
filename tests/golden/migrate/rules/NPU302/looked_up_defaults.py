# rules: NPU001 NPU302 NPU302
import torch

device = getattr(args, "device", "cuda")
dev2 = cfg.get("device", "cuda")
name = cfg.get("arch", "cuda")
label = getattr(args, "title", "cuda")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

device = getattr(args, "device", "npu")
dev2 = cfg.get("device", "npu")
name = cfg.get("arch", "cuda")
label = getattr(args, "title", "cuda")
