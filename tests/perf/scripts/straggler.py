"""A small DDP training run on gloo in which one rank can be made slow.

    python straggler.py --steps N [--slow-rank R --cause compute|host]

``compute``: rank R's model does extra matrix products in its forward (its own computation).
``host``: rank R's data loading sleeps before each batch (the device waits on the host).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, Dataset

EXTRA_PRODUCTS = 160  # 256x256 products: about 50 ms per step on one core
SLEEP_S = 0.05


class Batches(Dataset[torch.Tensor]):
    def __init__(self, count: int, slow: bool) -> None:
        self.count, self.slow = count, slow

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> torch.Tensor:
        if self.slow:
            time.sleep(SLEEP_S)
        return torch.randn(512, 128)


class Model(nn.Module):
    def __init__(self, extra: bool) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(128, 1536), nn.ReLU())
        self.head = nn.Linear(1536, 128)
        self.extra = extra
        self.square = torch.randn(256, 256) / 16

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(x)
        if self.extra:
            work = self.square
            for _ in range(EXTRA_PRODUCTS):
                work = torch.tanh(work @ self.square)
            hidden = hidden + work.mean() * 0
        return self.head(hidden)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--cause", choices=("compute", "host"), default="compute")
    options = parser.parse_args()
    dist.init_process_group("gloo")
    slow = dist.get_rank() == options.slow_rank
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(Model(slow and options.cause == "compute"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = DataLoader(Batches(options.steps, slow and options.cause == "host"), batch_size=None)
    for batch in batches:
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
