"""A GPU-style classifier: DDP over NCCL, torch.cuda.amp, CUDA events for timing. Unmodified CUDA code."""

import os

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
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if distributed:
        dist.init_process_group(backend="nccl")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.benchmark = True

    model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
    if distributed:
        model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    criterion = nn.CrossEntropyLoss().cuda()

    dataset = make_data()
    sampler = DistributedSampler(dataset, seed=0) if distributed else None
    loader = DataLoader(
        dataset,
        batch_size=32,
        sampler=sampler,
        shuffle=sampler is None,
        pin_memory=True,
        generator=torch.Generator().manual_seed(0),
    )

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for epoch in range(3):
        if sampler is not None:
            sampler.set_epoch(epoch)
        total = torch.zeros(2, device="cuda")
        for batch_features, batch_labels in loader:
            features = batch_features.cuda(non_blocking=True)
            labels = batch_labels.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast():
                loss = criterion(model(features), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            total += torch.stack(
                [loss.detach().float() * len(labels), torch.tensor(len(labels), device=device)]
            )
        if distributed:
            dist.all_reduce(total)
        if int(os.environ.get("RANK", "0")) == 0:
            print(f"epoch {epoch} loss {(total[0] / total[1]).item():.6f}")
    end.record()
    torch.cuda.synchronize()
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"timing {start.elapsed_time(end):.1f} ms on {torch.cuda.get_device_name()}")
    if distributed:
        dist.barrier()  # every rank done before any tears down (gloo aborts otherwise)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
