# rules: NPU001 NPU201
import torch

z = (x.cuda if on_gpu else x.cpu)()
flag = args.cuda if ok else False
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

z = (x.npu if on_gpu else x.cpu)()
flag = args.cuda if ok else False
