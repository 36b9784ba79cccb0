# rules: 
# modes: rules=rules.json
import ops

ops.npu_sync()
