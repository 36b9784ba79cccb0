# rules: NPU001 NPU201
import torch

z = (x.cuda if on_gpu else x.cpu)()
flag = args.cuda if ok else False
# output
import torch
import torch_npu

z = (x.npu if on_gpu else x.cpu)()
flag = args.cuda if ok else False
