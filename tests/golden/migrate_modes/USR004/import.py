# rules: USR001 USR004
# modes: rules=rules.json
from ops import cuda_sync

cuda_sync()
# output
from ops import cuda_sync
import ops

ops.npu_sync()
