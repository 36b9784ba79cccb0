# rules: NPU005 PRT001 PRT201
# modes: portable
import sys

sys.path.append("..")
from common import *

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().cuda()
torch.cuda.synchronize()
# output
import sys
import portable_device

sys.path.append("..")
from common import *

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(portable_device.device())
torch.cuda.synchronize()
