# rules: NPU403
# modes: distributed=main.py
# path: model.py
import torch.nn as nn

head = nn.DataParallel(head)
