"""The hand-written CPU version of ../project/train.py."""

import torch

torch.manual_seed(0)
features = torch.randn(64, 8)
targets = features.sum(dim=1, keepdim=True)
dataset = torch.utils.data.TensorDataset(features, targets)
loader = torch.utils.data.DataLoader(dataset, batch_size=16, num_workers=2)
model = torch.nn.Linear(8, 1)
optimizers = [
    torch.optim.Adam(model.parameters(), lr=0.01),
    torch.optim.AdamW(model.parameters(), lr=0.01, fused=True),
]
for epoch in range(3):
    for inputs, expected in loader:
        loss = torch.nn.functional.mse_loss(model(inputs), expected)
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.8f}")
