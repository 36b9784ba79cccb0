# rules: NPU905 NPU905 NPU905
from torch.utils.cpp_extension import CUDAExtension, load

ext = load(name="fused", sources=["fused.cu"])
mod = CUDAExtension("fused", ["fused.cu"])
