"""Image classifier in the usual GPU style: DDP when started by torchrun, amp, CUDA event timing."""

import json
import os

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
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if distributed:
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    device = torch.device("cuda", local_rank)

    dataset = TensorDataset(torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,)))
    sampler = DistributedSampler(dataset, shuffle=True, seed=0) if distributed else None
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, shuffle=sampler is None)

    model = Net().cuda()
    if distributed:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    start.record()
    for epoch in range(2):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch, target in loader:
            images = batch.cuda(non_blocking=True)
            labels = target.to(device, non_blocking=True)
            optimizer.zero_grad()
            with torch.cuda.amp.autocast():
                loss = F.cross_entropy(model(images), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    end.record()
    torch.cuda.synchronize()
    elapsed = start.elapsed_time(end)

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
