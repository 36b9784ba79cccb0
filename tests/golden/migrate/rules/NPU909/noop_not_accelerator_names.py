# rules: 
import torch
from accelerate import Accelerator

accelerator = Accelerator()
backend_accelerator = "tpu"
label = "gpu"
print("accelerator: cuda")
if accelerator.device.type == "npu":
    torch.zeros(1)
