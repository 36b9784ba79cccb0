# rules:
# modes: portable
from common import *

import torch

message = "from common import * brings torch.cuda helpers"
