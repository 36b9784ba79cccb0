"""GPU-style script in a sub-folder, started from the project root (``python codes/run.py``)."""

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(1)
features = torch.randn(48, 6)
targets = (features[:, :1] > 0).float()
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(features, targets), batch_size=12, pin_memory=True
)
model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).to(
    device
)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, foreach=True)
for epoch in range(3):
    for batch, labels in loader:
        inputs, expected = batch.to(device), labels.to(device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(inputs), expected)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(f"epoch {epoch} loss {loss.item():.8f}")
