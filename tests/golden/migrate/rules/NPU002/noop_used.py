# rules: NPU003 NPU003 NPU022
import amp_C
from apex.multi_tensor_apply import multi_tensor_applier

multi_tensor_applier(amp_C.multi_tensor_l2norm, None, [[]])
