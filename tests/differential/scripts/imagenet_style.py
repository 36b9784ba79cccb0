"""An ImageNet-style trainer: ``--gpu N`` moves everything with ``.cuda(args.gpu)``, the checkpoint
is resumed with ``loc = 'cuda:{}'.format(args.gpu)`` and copied to ``model_best.pth.tar``. The CPU
path is the run without ``--gpu``."""

import argparse
import hashlib
import json
import shutil

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", default=None, type=int)
args = parser.parse_args()


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def train(model, criterion, optimizer, steps, seed):
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        images = torch.randn(8, 3, 8, 8, generator=generator)
        target = torch.randint(0, 5, (8,), generator=generator)
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
        if torch.cuda.is_available():
            target = target.cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main_worker(gpu):
    model = make_model()
    if gpu is not None:
        torch.cuda.set_device(gpu)
        model = model.cuda(gpu)
        device = torch.device("cuda:{}".format(gpu))
    else:
        device = torch.device("cpu")
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = train(model, criterion, optimizer, 3, seed=1)
    save_checkpoint({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, True)
    model = make_model()
    if gpu is not None:
        model.cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    if gpu is None:
        checkpoint = torch.load("model_best.pth.tar")
    else:
        loc = "cuda:{}".format(gpu)
        checkpoint = torch.load("model_best.pth.tar", map_location=loc)
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    losses += train(model, criterion, optimizer, 3, seed=2)
    weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
    print(json.dumps({"device": device.type, "losses": losses,
                      "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip


main_worker(args.gpu)
