"""A seeded 3-block transformer trained a few steps, in the shape the compare tests need.

``--perturb norm|linear|act`` changes one module (blocks.1.norm's eps, blocks.2.mlp.0's weight,
blocks.1.mlp.1's activation); ``--bf16`` trains under bfloat16 autocast; ``--infer`` only runs
forward passes (no optimizer); under a launcher with WORLD_SIZE=2 it trains with DDP on gloo.
"""

import argparse
import os

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--perturb", choices=("norm", "linear", "act"))
parser.add_argument("--steps", type=int, default=3)
parser.add_argument("--bf16", action="store_true")
parser.add_argument("--infer", action="store_true")
args = parser.parse_args()
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
VOCAB, WIDTH = 50, 16


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.attn = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm(x))


class TinyTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


model = TinyTransformer().to(device)
if args.perturb == "norm":
    model.blocks[1].norm.eps = 0.5
elif args.perturb == "linear":
    with torch.no_grad():
        model.blocks[2].mlp[0].weight.mul_(1.1)
elif args.perturb == "act":
    model.blocks[1].mlp[1] = nn.ReLU()
rank = int(os.environ.get("RANK", "0"))
tokens = torch.randint(0, VOCAB, (4, 12), generator=torch.Generator().manual_seed(rank)).to(device)
if args.infer:
    model.eval()
    with torch.no_grad():
        for _ in range(args.steps):
            print(float(model(tokens=tokens).sum()))  # a keyword input
    raise SystemExit(0)
if int(os.environ.get("WORLD_SIZE", "1")) > 1:
    torch.distributed.init_process_group("gloo")
    model = nn.parallel.DistributedDataParallel(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
for _ in range(args.steps):
    with torch.autocast(device, dtype=torch.bfloat16, enabled=args.bf16):
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB).float(), tokens[:, 1:].reshape(-1)
        )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.item())
if torch.distributed.is_initialized():
    torch.distributed.destroy_process_group()
