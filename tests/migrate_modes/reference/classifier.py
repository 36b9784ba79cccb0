"""The classifier of projects/classifier written by hand for the CPU (gloo, CPU autocast, host clock)."""

import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).flatten(1))


def main():
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend="gloo")
    torch.manual_seed(0)
    device = torch.device("cpu")

    dataset = TensorDataset(torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,)))
    sampler = DistributedSampler(dataset, shuffle=True, seed=0) if distributed else None
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=sampler is None)

    model = Net()
    if distributed:
        model = DDP(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")

    start = time.perf_counter()
    for epoch in range(2):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for images, target in loader:
            labels = target.to(device)
            optimizer.zero_grad()
            with torch.autocast("cpu"):
                loss = F.cross_entropy(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    elapsed = (time.perf_counter() - start) * 1000

    total = loss.detach().float().clone()
    if distributed:
        dist.all_reduce(total)
        total /= dist.get_world_size()
    if not distributed or dist.get_rank() == 0:
        print(json.dumps({"loss": total.item(), "timed": elapsed >= 0}))
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
