# rules: NPU005 NPU201
import sys

sys.path.append("..")
from common import *

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().cuda()
torch.cuda.synchronize()
# output
import sys

sys.path.append("..")
from common import *

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().npu()
torch.cuda.synchronize()
