"""Image classifier training with DistributedDataParallel and mixed precision.

Launch with: torchrun --nproc_per_node=8 train_classifier.py --epochs 90
Checkpoints are written to ./checkpoints/cuda_run/ (the path keeps its name).
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from models.resnet import resnet18


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="ResNet training on cuda devices")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dist-backend", default="nccl", help="use nccl for GPUs")
    parser.add_argument("--resume", default="", help="path to a checkpoint, e.g. cuda_ckpt.pt")
    return parser.parse_args()


def setup_distributed(backend: str = "nccl") -> tuple[int, int, torch.device]:
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend=backend)
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")
    return dist.get_rank(), local_rank, device


def synthetic_loader(batch_size: int, rank: int, world: int) -> DataLoader:
    images = torch.randn(1024, 3, 32, 32)
    labels = torch.randint(0, 10, (1024,))
    dataset = torch.utils.data.TensorDataset(images, labels)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, pin_memory=True)


def train_one_epoch(model, loader, optimizer, scaler, device, epoch: int) -> float:
    model.train()
    start = time.time()
    total = 0.0
    for images, labels in loader:
        images = images.cuda(non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = F.cross_entropy(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total += loss.item()
    torch.cuda.synchronize()
    if dist.get_rank() == 0:
        print(f"epoch {epoch}: loss {total:.3f} in {time.time() - start:.1f}s on cuda")
    return total


def main() -> None:
    args = parse_args()
    rank, local_rank, device = setup_distributed(args.dist_backend)
    torch.backends.cudnn.benchmark = True
    model = resnet18(num_classes=10).cuda()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    if args.resume:
        state = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model.module.load_state_dict(state["model"])
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = GradScaler()
    loader = synthetic_loader(args.batch_size, rank, dist.get_world_size())
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, scaler, device, epoch)
    if rank == 0:
        print("max memory", torch.cuda.max_memory_allocated() / 2**20, "MiB")
        torch.save({"model": model.module.state_dict()}, "checkpoints/cuda_run/last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
