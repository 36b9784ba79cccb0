"""A GPU-style tiny language model: torch.amp.autocast(device_type="cuda"), torch.amp.GradScaler("cuda"),
device= in factories, a CUDA generator, checkpoints under a path that contains "cuda". Unmodified CUDA code."""

import os
import sys
import tempfile

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
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=tokens.device)
        hidden = self.block(self.embed(tokens) + self.position, src_mask=mask, is_causal=True)
        return self.head(hidden)


def main() -> None:
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("cuda:nccl,cpu:gloo")
    rank = int(os.environ.get("RANK", "0"))
    device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    torch.manual_seed(0)
    model = TinyLM().to(device)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[device])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cuda")
    sampler = torch.Generator(device="cuda").manual_seed(100 + rank)
    corpus = torch.arange(400, device="cuda") * 7 % VOCAB

    for step in range(12):
        starts = torch.randint(0, len(corpus) - CONTEXT - 1, (8,), device="cuda", generator=sampler)
        offsets = torch.arange(CONTEXT, device=device)
        tokens = corpus[starts[:, None] + offsets]
        targets = corpus[starts[:, None] + offsets + 1]
        with torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16):
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

    if rank == 0:
        directory = tempfile.mkdtemp(prefix="cuda_ckpt_")
        path = os.path.join(directory, "cuda_model.pt")
        state = (model.module if distributed else model).state_dict()
        torch.save(state, path)
        restored = torch.load(path, map_location="cuda")
        again = torch.load(path, map_location={"cuda:0": "cuda:0"})
        same = all(
            torch.equal(restored[k], again[k]) and torch.equal(restored[k], v)
            for k, v in state.items()
        )
        print(
            f"checkpoint restored {same} on {restored['head.weight'].device.type}", file=sys.stderr
        )
        print(f"peak memory query {torch.cuda.max_memory_allocated() >= 0}", file=sys.stderr)
    if distributed:
        dist.barrier()  # every rank done before any tears down (gloo aborts otherwise)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
