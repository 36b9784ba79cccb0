# rules: PRT001 PRT202 PRT301 PRT301 PRT301 PRT301 PRT301 PRT301 PRT301
# modes: portable
import torch

# On a CPU-only host every test below is False, as it was for the original; on an accelerator
# host it is what the original computed on a CUDA host.
device = "cuda"
device_type = "cuda" if "cuda" in device else "cpu"
if device_type == "cuda":
    x = x.pin_memory()
assert x.is_cuda == (device_type == 'cuda')
if str(device) == "cuda:0":
    pass
if args.device.startswith("cuda"):
    pass
# output
import torch
import portable_device

# On a CPU-only host every test below is False, as it was for the original; on an accelerator
# host it is what the original computed on a CUDA host.
device = portable_device.device_type()
device_type = portable_device.device_type() if (portable_device.device_type() if portable_device.is_available() else "cuda") in device else "cpu"
if device_type == (portable_device.device_type() if portable_device.is_available() else "cuda"):
    x = x.pin_memory()
assert (x.device.type != "cpu") == (device_type == (portable_device.device_type() if portable_device.is_available() else 'cuda'))
if str(device) == f"{portable_device.device_type() if portable_device.is_available() else 'cuda'}:0":
    pass
if args.device.startswith((portable_device.device_type() if portable_device.is_available() else "cuda")):
    pass
