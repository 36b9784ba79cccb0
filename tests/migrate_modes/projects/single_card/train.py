"""A single-card regression script: the input of `ascendify migrate ... distributed -m train.py`."""

import argparse
import json

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", default="model.pt")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    train_loader = DataLoader(data, batch_size=8, shuffle=True)

    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    model = model.cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    for epoch in range(args.epochs):
        total, seen = 0.0, 0
        for features, labels in train_loader:
            x, y = features.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total, seen = total + loss.item() * len(x), seen + len(x)
        print(json.dumps({"epoch": epoch, "loss": total / seen, "samples": seen}))
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
