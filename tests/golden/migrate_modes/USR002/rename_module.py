# rules: USR002 USR002 USR002 USR002
# modes: rules=rules.toml
import cuda_kernels
import cuda_kernels.fused as fused
from cuda_kernels.layers import Attention

y = cuda_kernels.gelu(x)
z = fused.adam(p)
# output
import npu_kernels
import npu_kernels.fused as fused
from npu_kernels.layers import Attention

y = npu_kernels.gelu(x)
z = fused.adam(p)
