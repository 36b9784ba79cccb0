# rules: USR001 USR005
# modes: rules=msft_rules.json
import mylib as AA

AA.ops.cuda_sync()
# output
import mylib as AA

AA.ops.npu_sync()
