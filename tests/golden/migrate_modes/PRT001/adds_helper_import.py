# rules: PRT001 PRT101
# modes: portable
"""Doc."""
import torch as th

th.cuda.synchronize()
# output
"""Doc."""
import torch as th
import portable_device

portable_device.synchronize()
