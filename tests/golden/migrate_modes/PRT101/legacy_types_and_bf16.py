# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101
# modes: portable
import torch
a = torch.zeros(3).type(torch.cuda.FloatTensor)
ok = isinstance(a, torch.cuda.FloatTensor)
b = torch.cuda.FloatTensor(3)
dt = torch.bfloat16 if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float16
# output
import torch
import portable_device
a = torch.zeros(3).to(portable_device.device(), torch.float32)
ok = (isinstance(a, torch.Tensor) and a.dtype == torch.float32 and a.device.type != "cpu")
b = portable_device.FloatTensor(3)
dt = torch.bfloat16 if torch.accelerator.is_available() and getattr(portable_device.module(), "is_bf16_supported", bool)() else torch.float16
