# rules: USR002 USR002
# modes: rules=msft_rules.json
import mylib.cuda_kernels as kernels
from mylib.cuda_kernels import fused

y = fused(kernels.scale(x))
# output
import mylib.npu_kernels as kernels
from mylib.npu_kernels import fused

y = fused(kernels.scale(x))
