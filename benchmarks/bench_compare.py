"""What ``ascendify compare`` costs: a training step with and without the recorder, the dump's size,
and how fast two dumps are compared.

Three figures, each measured side by side in this run:

* per step, in one process: the same training step plain and with the recorder armed as ``compare
  dump --level stats`` arms it (statistics of every module call's inputs and outputs, the loss and
  the gradient norm, written per step), for a small transformer and a small CNN; steps taken in
  turns, plain and recorded, so that a busy machine slows both alike; the ratio of medians (target
  <= 1.5x; msprobe's published module-level dump costs 4.5x);
* the same for ``--level api`` (every torch operator call recorded too; target <= 3x) and for
  ``--nan-check`` (every operator's output checked for NaN and inf);
* the dump's size per step (bytes of rank0.jsonl / steps);
* comparing: a dump of ``--steps`` steps loaded and judged against itself, in records per second.

Usage::

    PYTHONPATH=src python benchmarks/bench_compare.py [--steps 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import torch
from torch import nn

from ascendify.compare._recorder import Recorder
from ascendify.compare.judge import judge
from ascendify.compare.records import read_rank
from ascendify.compare.settings import DumpSettings


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, 4, batch_first=True)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    """4 blocks, width 128, sequences of 64 tokens, batch 8: about 0.9 M parameters."""

    def __init__(self, vocab: int = 1000, width: int = 128) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(4))
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def cnn() -> nn.Module:
    """A small CNN on 32x32 images (batch 32): conv, batch norm, ReLU, four times, then a classifier."""
    layers: list[nn.Module] = []
    channels = 3
    for width in (16, 32, 32, 64):
        layers += [nn.Conv2d(channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU()]
        layers.append(nn.MaxPool2d(2))
        channels = width
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(64 * 2 * 2, 10))


def training_step(name: str) -> Callable[[], None]:
    torch.manual_seed(0)
    if name == "transformer":
        model: nn.Module = Transformer()
        inputs, targets = torch.randint(0, 1000, (8, 64)), torch.randint(0, 1000, (8 * 64,))
    else:
        model = cnn()
        inputs, targets = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> None:
        logits = model(inputs)
        loss = nn.functional.cross_entropy(logits.reshape(targets.numel(), -1), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step


def _seconds(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def per_step(
    name: str, steps: int, folder: Path, settings: DumpSettings
) -> tuple[float, float, int]:
    """Median plain and recorded step times, and the dump's bytes per step."""
    step = training_step(name)
    step()  # warm up
    recorder = Recorder(settings, folder, rank=0)
    plain: list[float] = []
    recorded: list[float] = []
    for _ in range(steps):  # in turns: load on the machine hits both alike
        plain.append(_seconds(step))
        recorder.arm()
        recorded.append(_seconds(step))
        recorder.disarm()
    recorder.close()
    size = (folder / "rank0.jsonl").stat().st_size
    return statistics.median(plain), statistics.median(recorded), size // steps


def compare_speed(folder: Path) -> tuple[int, float]:
    """Records judged per second: the dump loaded and compared with itself."""
    start = time.perf_counter()
    records = list(read_rank(folder / "rank0.jsonl", 0))
    comparison = judge(records, list(read_rank(folder / "rank0.jsonl", 0)), "auto")
    elapsed = time.perf_counter() - start
    assert not comparison.failed
    return len(records), len(records) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch's CPU threads")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    forms = {
        "--level stats": DumpSettings(steps=0),
        "--level api": DumpSettings(steps=0, level="api"),
        "--nan-check": DumpSettings(steps=0, nan_check=True),
    }
    for name in ("transformer", "cnn"):
        for form, settings in forms.items():
            with tempfile.TemporaryDirectory() as scratch:
                plain, recorded, size = per_step(name, args.steps, Path(scratch), settings)
                count, rate = compare_speed(Path(scratch))
            print(
                f"{name}: step (median of {args.steps}) plain {plain * 1e3:.1f} ms, dump {form} "
                f"{recorded * 1e3:.1f} ms, ratio {recorded / plain:.2f}; dump {size / 1024:.1f} "
                f"KiB per step; compare {count} records in {count / rate * 1e3:.0f} ms, "
                f"{rate:,.0f} records/s"
            )


if __name__ == "__main__":
    main()
