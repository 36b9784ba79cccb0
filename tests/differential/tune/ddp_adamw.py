"""A two-rank DDP trainer in the shape ModelZoo engineers tune by hand: AdamW, batch norm, a
shuffled DistributedSampler loader with a worker, NCCL on the GPU path (``--cpu``: gloo). Rank 0
prints its losses as one JSON line."""

import argparse
import json
import os

import torch
import torch.nn.functional as F
from torch.distributed import barrier, destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
torch.backends.cuda.matmul.allow_tf32 = False


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    if args.cpu:
        init_process_group(backend="gloo")
        device = torch.device("cpu")
    else:
        torch.cuda.set_device(local_rank)
        init_process_group(backend="nccl")
        device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(10, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(), torch.nn.Linear(16, 3)
    ).to(device)
    model = DDP(model) if args.cpu else DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(1)
    data = TensorDataset(torch.randn(64, 10, generator=generator),
                         torch.randint(0, 3, (64,), generator=generator))  # fmt: skip
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    # 32 samples per rank: four whole batches, so dropping a last partial one changes nothing.
    loader = DataLoader(data, batch_size=8, sampler=sampler, num_workers=1)
    losses = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for batch, labels in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(batch.to(device)), labels.to(device))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    if int(os.environ["RANK"]) == 0:
        print(json.dumps({"device": device.type, "losses": losses}))
    barrier()  # no rank tears the group down while another still uses it
    destroy_process_group()


if __name__ == "__main__":
    main()
