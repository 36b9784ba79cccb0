"""The multi-GPU torchrun tutorial: one process per GPU, NCCL, ``model.to(gpu_id)`` and DDP with
``device_ids``. The CPU path is ``--cpu`` (gloo, no device ids)."""

import argparse
import hashlib
import json
import os

import torch
import torch.nn.functional as F
from torch.distributed import barrier, destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()


def ddp_setup():
    if args.cpu:
        init_process_group(backend="gloo")
    else:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        init_process_group(backend="nccl")


class Trainer:
    def __init__(self, model, optimizer):
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        if args.cpu:
            self.model = DDP(model)
        else:
            self.model = DDP(model.to(self.gpu_id), device_ids=[self.gpu_id])
        self.optimizer = optimizer

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(source), targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def train(self, steps):
        generator = torch.Generator().manual_seed(int(os.environ["RANK"]))
        losses = []
        for _ in range(steps):
            source = torch.randn(4, 10, generator=generator)
            targets = torch.randint(0, 3, (4,), generator=generator)
            if not args.cpu:
                source = source.to(self.gpu_id)
                targets = targets.to(self.gpu_id)
            losses.append(self._run_batch(source, targets))
        return losses


ddp_setup()
torch.manual_seed(0)
model = torch.nn.Linear(10, 3)
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
losses = trainer.train(4)
if int(os.environ["RANK"]) == 0:
    weights = repr([p.detach().cpu().tolist() for p in trainer.model.module.parameters()])
    device = "cpu" if args.cpu else torch.device("cuda", trainer.gpu_id).type
    print(json.dumps({"device": device, "losses": losses,
                      "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
barrier()  # no rank tears the group down while another still uses it (gloo aborts)
destroy_process_group()
