# rules: NPU201
# modes: specify_device
import os

x = batch.cuda()
# output
import os

x = batch.npu()
