"""Train a small image classifier on synthetic data: a typical GPU training script.

Written for NVIDIA GPUs the way most projects are: CUDA device strings, NCCL, CUDA AMP, CUDA events for
timing. Start it with one process per card, e.g. `torchrun --nproc-per-node 2 train.py --epochs 2`.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class SmallNet(nn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def synthetic_dataset(size: int, seed: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(size, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 10, (size,), generator=generator)
    return TensorDataset(images, labels)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--train_url", default="./output", help="where the checkpoint goes")
    args = parser.parse_args()

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    if distributed:
        dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    torch.manual_seed(0)

    dataset = synthetic_dataset(512, seed=1)
    sampler = DistributedSampler(dataset) if distributed else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)

    model = SmallNet().cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        start.record()
        total = 0.0
        for images, labels in loader:
            images, labels = images.cuda(non_blocking=True), labels.to(device)
            optimizer.zero_grad()
            with torch.cuda.amp.autocast():
                loss = F.cross_entropy(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += loss.item()
        end.record()
        torch.cuda.synchronize()
        if int(os.environ.get("RANK", 0)) == 0:
            print(f"epoch {epoch} loss {total / len(loader):.4f} time {start.elapsed_time(end):.0f} ms")

    if int(os.environ.get("RANK", 0)) == 0:
        os.makedirs(args.train_url, exist_ok=True)
        state = model.module.state_dict() if distributed else model.state_dict()
        torch.save(state, os.path.join(args.train_url, "model.pt"))
    if distributed:
        dist.barrier()  # every rank leaves together: none tears down while rank 0 still saves
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
