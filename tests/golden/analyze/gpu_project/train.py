"""A GPU training script as people write them; every line the analysis must report says so."""

import os

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.cuda as tc
from apex import amp  # expect: AN103 apex
from flash_attn import flash_attn_func  # expect: AN103 flash_attn
from torch.cuda.amp import GradScaler, autocast

from models.net import Net

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: AN106 CUDA_VISIBLE_DEVICES
cudnn.benchmark = True  # expect: AN101 torch.backends.cudnn.benchmark
torch.backends.cuda.matmul.allow_tf32 = True  # expect: AN101 torch.backends.cuda.matmul.allow_tf32


def main() -> None:
    tc.set_device(0)  # expect: AN100 torch.cuda.set_device
    model = Net().cuda()  # expect: AN100 .cuda()
    model = torch.nn.DataParallel(model)  # expect: AN101 torch.nn.DataParallel
    scaler = GradScaler()  # expect: AN100 torch.cuda.amp.GradScaler
    major = tc.get_device_properties(0).major  # expect: AN102 torch.cuda.get_device_properties
    weights = np.ones(3, dtype=np.float64)  # expect: AN104 numpy.float64
    for step in range(3):
        with autocast():  # expect: AN100 torch.cuda.amp.autocast
            loss = model(torch.randn(4, 8, device="cuda")).double().sum()  # expect: AN104 .double()
        scaler.scale(loss).backward()
        tc.nvtx.range_push(f"step {step}")  # expect: AN100 torch.cuda.nvtx.range_push
        print(tc.memory_usage())  # expect: AN101 torch.cuda.memory_usage
    print(major, weights, amp, flash_attn_func, "cuda is not a device here")


if __name__ == "__main__":
    main()
