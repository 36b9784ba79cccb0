"""The hand-written CPU version of lm_autocast.py."""

import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

VOCAB, CONTEXT, WIDTH = 40, 16, 32


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Parameter(torch.zeros(CONTEXT, WIDTH))
        self.block = nn.TransformerEncoderLayer(
            WIDTH, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        hidden = self.block(self.embed(tokens) + self.position, src_mask=mask, is_causal=True)
        return self.head(hidden)


def main() -> None:
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    rank = int(os.environ.get("RANK", "0"))
    torch.manual_seed(0)
    model = TinyLM()
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cpu")
    sampler = torch.Generator().manual_seed(100 + rank)
    corpus = torch.arange(400) * 7 % VOCAB

    for step in range(12):
        starts = torch.randint(0, len(corpus) - CONTEXT - 1, (8,), generator=sampler)
        offsets = torch.arange(CONTEXT)
        tokens = corpus[starts[:, None] + offsets]
        targets = corpus[starts[:, None] + offsets + 1]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(tokens)
            loss = F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if distributed:
            dist.all_reduce(loss.detach(), op=dist.ReduceOp.AVG)
        if rank == 0 and step % 3 == 2:
            print(f"step {step} loss {loss.item():.6f}")
    if distributed:
        dist.barrier()  # every rank done before any tears down (gloo aborts otherwise)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
