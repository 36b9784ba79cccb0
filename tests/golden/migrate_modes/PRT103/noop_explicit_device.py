# rules: 
# modes: portable
import torch

scaler = torch.amp.GradScaler("cpu")
with torch.autocast("cpu"):
    pass
