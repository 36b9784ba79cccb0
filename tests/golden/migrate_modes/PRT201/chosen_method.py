# rules: PRT001 PRT201 PRT201
# modes: portable
import torch

z = (x.cuda if on_gpu else x.cpu)()
w = (x.cuda if on_gpu else x.cpu)(non_blocking=True)
flag = args.cuda if ok else False
# output
import torch
import portable_device

z = ((lambda *args, **kwargs: x.to(portable_device.device(*args[:1]), **kwargs)) if on_gpu else x.cpu)()
w = ((lambda *args, **kwargs: x.to(portable_device.device(*args[:1]), **kwargs)) if on_gpu else x.cpu)(non_blocking=True)
flag = args.cuda if ok else False
