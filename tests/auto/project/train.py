"""GPU-style training at the project root: Adam and fused AdamW fed by a pinned DataLoader with workers."""

import torch

torch.manual_seed(0)
features = torch.randn(64, 8)
targets = features.sum(dim=1, keepdim=True)
dataset = torch.utils.data.TensorDataset(features, targets)
loader = torch.utils.data.DataLoader(dataset, batch_size=16, pin_memory=True, num_workers=2)
model = torch.nn.Linear(8, 1).cuda()
optimizers = [
    torch.optim.Adam(model.parameters(), lr=0.01),
    torch.optim.AdamW(model.parameters(), lr=0.01, fused=True),
]
for epoch in range(3):
    for batch, labels in loader:
        inputs, expected = batch.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        loss = torch.nn.functional.mse_loss(model(inputs), expected)
        for optimizer in optimizers:
            optimizer.zero_grad()
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
    torch.cuda.synchronize()
    print(f"epoch {epoch} loss {loss.item():.8f}")
