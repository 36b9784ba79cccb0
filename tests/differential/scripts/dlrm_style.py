"""A DLRM-style recommender: embedding bags and an MLP, ``--use-gpu`` picks the device
(the CPU path is without it)."""

import argparse
import hashlib
import json
import sys

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--use-gpu", action="store_true", default=False)
parser.add_argument("--seed", type=int, default=123)
args = parser.parse_args()
torch.manual_seed(args.seed)
use_gpu = args.use_gpu and torch.cuda.is_available()
if use_gpu:
    torch.cuda.manual_seed_all(args.seed)
    torch.backends.cudnn.deterministic = True
    device = torch.device("cuda", 0)
    ngpus = torch.cuda.device_count()
    print("Using {} GPU(s)...".format(ngpus), file=sys.stderr)
else:
    device = torch.device("cpu")
    print("Using CPU...", file=sys.stderr)


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(20, 4, mode="sum") for _ in range(3)])
        self.bot_l = nn.Sequential(nn.Linear(5, 4), nn.ReLU())
        self.top_l = nn.Sequential(nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, dense_x, offsets, indices):
        x = self.bot_l(dense_x)
        ly = [emb(indices[k], offsets[k]) for k, emb in enumerate(self.emb_l)]
        return self.top_l(torch.cat([x, *ly], dim=1))


dlrm = DLRM()
if use_gpu:
    dlrm = dlrm.to(device)
loss_fn = torch.nn.BCELoss(reduction="mean")
optimizer = torch.optim.SGD(dlrm.parameters(), lr=0.1)
generator = torch.Generator().manual_seed(7)
losses = []
for _ in range(5):
    X = torch.rand(6, 5, generator=generator)
    lS_o = [torch.arange(6) * 2 for _ in range(3)]
    lS_i = [torch.randint(0, 20, (12,), generator=generator) for _ in range(3)]
    T = torch.randint(0, 2, (6, 1), generator=generator).float()
    if use_gpu:
        X = X.to(device, non_blocking=True)
        lS_o = [S_o.to(device) for S_o in lS_o]
        lS_i = [S_i.to(device) for S_i in lS_i]
        T = T.to(device)
    Z = dlrm(X, lS_o, lS_i)
    E = loss_fn(Z, T)
    optimizer.zero_grad()
    E.backward()
    optimizer.step()
    if use_gpu:
        torch.cuda.synchronize()
    losses.append(E.detach().cpu().item())
weights = repr([p.detach().cpu().tolist() for p in dlrm.parameters()])
print(json.dumps({"device": device.type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
