"""YOLO-style device selection: ``--device 0`` or ``--device cpu`` parsed by ``select_device``,
which sets the visible devices and checks that the GPU exists. The CPU path is ``--device cpu``."""

import argparse
import hashlib
import json
import os

import torch
import torch.nn as nn


def select_device(device=""):
    device = str(device).strip().lower().replace("cuda:", "").replace("none", "")
    cpu = device == "cpu"
    if cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    elif device:
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        assert torch.cuda.is_available() and torch.cuda.device_count() >= len(device.replace(",", "")), (
            f"Invalid CUDA '--device {device}' requested"
        )
    if not cpu and torch.cuda.is_available():
        arg = "cuda:0"
    else:
        arg = "cpu"
    return torch.device(arg)


parser = argparse.ArgumentParser()
parser.add_argument("--device", default="")
opt = parser.parse_args()
device = select_device(opt.device)
cuda = device.type != "cpu"
torch.manual_seed(3)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(), nn.Conv2d(8, 2, 1))
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
generator = torch.Generator().manual_seed(5)
losses = []
for _ in range(4):
    imgs = torch.rand(2, 3, 16, 16, generator=generator).to(device, non_blocking=cuda)
    targets = torch.rand(2, 2, 16, 16, generator=generator).to(device)
    loss = nn.functional.mse_loss(model(imgs), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.item())
mem = f"{torch.cuda.memory_reserved() / 1e9 if torch.cuda.is_available() else 0:.3g}G"
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device.type, "losses": losses, "memory": mem,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
