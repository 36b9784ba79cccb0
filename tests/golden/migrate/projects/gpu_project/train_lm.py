#!/usr/bin/env python
"""Causal language model training loop (GPT-style) with bf16 autocast and profiling."""
import math
import os

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"


class TinyGPT(nn.Module):
    def __init__(self, vocab: int = 1000, dim: int = 128, layers: int = 2, device=None) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, device=device)
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, batch_first=True, device=device)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab, device=device)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        size = tokens.size(1)
        mask = torch.triu(torch.full((size, size), float("-inf"), device=tokens.device), 1)
        return self.head(self.blocks(self.embed(tokens), mask=mask))


def get_batch(batch: int, length: int, vocab: int) -> tuple[torch.Tensor, torch.Tensor]:
    data = torch.randint(0, vocab, (batch, length + 1), device=DEVICE)
    return data[:, :-1], data[:, 1:]


def main() -> None:
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    model = TinyGPT(device=DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    use_amp = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    prof = profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=2),
        on_trace_ready=tensorboard_trace_handler("./log/lm"),
    )
    prof.start()
    for step in range(20):
        inputs, targets = get_batch(8, 64, 1000)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_amp):
            logits = model(inputs)
            loss = nn.functional.cross_entropy(logits.reshape(-1, 1000), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        prof.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f} ppl {math.exp(loss.item()):.1f}")
    prof.stop()
    if DEVICE == "cuda":
        print(torch.cuda.memory_summary())
    torch.save(model.state_dict(), "lm_cuda.pt")
    state = torch.load("lm_cuda.pt", map_location=torch.device(DEVICE))
    model.load_state_dict(state)


if __name__ == "__main__":
    main()
