"""The hand-written CPU version of classifier_ddp.py: gloo, no device_ids, CPU autocast and scaler."""

import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def make_data(n: int = 256) -> TensorDataset:
    generator = torch.Generator().manual_seed(1234)
    features = torch.randn(n, 20, generator=generator)
    labels = (features[:, :5].sum(dim=1) > 0).long() + (features[:, 5] > 1).long()
    return TensorDataset(features, labels)


def main() -> None:
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group(backend="gloo")
    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3))
    if distributed:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cpu")
    criterion = nn.CrossEntropyLoss()

    dataset = make_data()
    sampler = DistributedSampler(dataset, seed=0) if distributed else None
    loader = DataLoader(
        dataset,
        batch_size=32,
        sampler=sampler,
        shuffle=sampler is None,
        generator=torch.Generator().manual_seed(0),
    )

    start = time.perf_counter()
    for epoch in range(3):
        if sampler is not None:
            sampler.set_epoch(epoch)
        total = torch.zeros(2)
        for features, labels in loader:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.float16):
                loss = criterion(model(features), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += torch.stack([loss.detach().float() * len(labels), torch.tensor(len(labels))])
        if distributed:
            dist.all_reduce(total)
        if int(os.environ.get("RANK", "0")) == 0:
            print(f"epoch {epoch} loss {(total[0] / total[1]).item():.6f}")
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"timing {(time.perf_counter() - start) * 1000:.1f} ms on cpu")
    if distributed:
        dist.barrier()  # every rank done before any tears down (gloo aborts otherwise)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
