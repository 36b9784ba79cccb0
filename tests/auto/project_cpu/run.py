"""The hand-written CPU version of ../project/codes/run.py."""

import torch

torch.manual_seed(1)
features = torch.randn(48, 6)
targets = (features[:, :1] > 0).float()
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(features, targets), batch_size=12
)
model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, foreach=True)
for epoch in range(3):
    for inputs, expected in loader:
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(inputs), expected)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.8f}")
