"""A seeded 3-block transformer whose attention is written with functional calls (torch.matmul,
torch.softmax, F.gelu), in the shape the operator-level compare tests need.

``--perturb softmax`` gives blocks.1's torch.softmax a CPU kernel that computes in bfloat16 and
returns float32, as a less precise accelerator kernel would: the call and its dtypes are the same,
only the operator's numbers change, inside a module whose other calls agree;
``--nan-step S --nan-rank R`` makes blocks.2's torch.log see a negative number at step S on rank R;
``--fp16-overflow`` multiplies in float16 past its largest value in blocks.0. Under a launcher
with WORLD_SIZE=2 it trains with DDP on gloo. ``--msprobe DIR`` dumps the run with msprobe's own
PrecisionDebugger (module level) instead, as a user of msprobe would.
"""

import argparse
import math
import os

import torch
from torch import nn
from torch.nn import functional

parser = argparse.ArgumentParser()
parser.add_argument("--perturb", choices=("softmax",))
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--nan-step", type=int, default=-1)
parser.add_argument("--nan-rank", type=int, default=0)
parser.add_argument("--fp16-overflow", action="store_true")
parser.add_argument("--msprobe", metavar="DIR")
args = parser.parse_args()
torch.manual_seed(0)
VOCAB, WIDTH = 50, 16
RANK = int(os.environ.get("RANK", "0"))
step = 0
softmax_in_bfloat16 = [False]  # set around blocks.1's softmax call when perturbed
SOFTMAX_KERNELS = torch.library.Library("aten", "IMPL")


def softmax_kernel(x: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    shifted = x - x.amax(dim, keepdim=True)
    if softmax_in_bfloat16[0]:
        shifted = shifted.bfloat16()
    e = shifted.exp()
    return (e / e.sum(dim, keepdim=True)).to(x.dtype)


if args.perturb == "softmax":
    SOFTMAX_KERNELS.impl("_softmax", softmax_kernel, "CPU")


class Block(nn.Module):
    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index
        self.norm = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(WIDTH)
        softmax_in_bfloat16[0] = args.perturb == "softmax" and self.index == 1
        weights = torch.softmax(scores, dim=-1)
        softmax_in_bfloat16[0] = False
        h = functional.gelu(torch.matmul(weights, v))
        if self.index == 2 and step == args.nan_step and args.nan_rank == RANK:
            h = h + torch.log(h.detach().min() - 1.0)  # the log of a negative number: NaN
        if self.index == 0 and args.fp16_overflow:
            h = (h.half() * 60000.0 * 60000.0).float()
        return x + self.out(h)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(Block(i) for i in range(3))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = Model()
tokens = torch.randint(0, VOCAB, (4, 12), generator=torch.Generator().manual_seed(RANK))
if int(os.environ.get("WORLD_SIZE", "1")) > 1:
    torch.distributed.init_process_group("gloo")
    model = nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
debugger = None
if args.msprobe:
    from msprobe.pytorch import PrecisionDebugger

    debugger = PrecisionDebugger(task="statistics", level="L0", dump_path=args.msprobe)
for step in range(args.steps):
    if debugger is not None:
        debugger.start(model)
    logits = model(tokens[:, :-1])
    loss = functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if debugger is not None:
        debugger.stop()
        debugger.step()
    print(f"step {step} loss {loss.item():.6f}", flush=True)
if torch.distributed.is_initialized():
    torch.distributed.destroy_process_group()
