# rules: NPU905 NPU906
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension

ext = CppExtension("fused", ["fused.cpp"])
if torch.cuda.is_available() and CUDA_HOME is not None:
    ext = CUDAExtension("fused", ["fused.cpp", "fused_kernel.cu"], define_macros=[("WITH_CUDA", None)])

setup(name="fused", ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
