"""A tiny GPT-style trainer: a device string, device-type branches, pinned batches, autocast, a
gradient scaler and a resumable checkpoint. The CPU path is ``--device cpu``."""

import argparse
import hashlib
import json
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--backend", default="nccl")
args = parser.parse_args()
device = args.device
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
device_type = "cuda" if "cuda" in device else "cpu"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type, dtype=ptdtype)
data = torch.randint(0, 32, (400,))


def get_batch(step):
    ix = torch.arange(4) * 37 + step
    x = torch.stack([data[i : i + 8] for i in ix])
    y = torch.stack([data[i + 1 : i + 9] for i in ix])
    if device_type == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    return x, y


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(32, 16)
        self.qkv = nn.Linear(16, 48)
        self.head = nn.Linear(16, 32)

    def forward(self, idx, targets):
        x = self.wte(idx)
        q, k, v = self.qkv(x).split(16, dim=2)
        x = x + F.scaled_dot_product_attention(q, k, v, is_causal=True)
        logits = self.head(x)
        return F.cross_entropy(logits.view(-1, 32), targets.view(-1))


model = TinyGPT().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
losses = []
for step in range(6):
    if step == 3:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "ckpt.pt")
        checkpoint = torch.load("ckpt.pt", map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    x, y = get_batch(step)
    with ctx:
        loss = model(x, y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    losses.append(loss.item())
if device_type == "cuda":
    torch.cuda.synchronize()
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device_type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
