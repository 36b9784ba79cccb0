# rules: USR001 USR001
# modes: rules=rules.json
from ops import cuda_sync, other
from ops import cuda_sync as sync_all

cuda_sync()
sync_all()
# output
from ops import npu_sync as cuda_sync, other
from ops import npu_sync as sync_all

cuda_sync()
sync_all()
