# rules:
from torch.utils.cpp_extension import BuildExtension

cmdclass = {"build_ext": BuildExtension}
