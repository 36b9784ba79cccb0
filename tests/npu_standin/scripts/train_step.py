"""A few training steps on the device given as argv[1]; prints each loss and the weights, exactly.

Run on "cpu" with plain torch and on "npu" under the stand-in: the outputs must be identical.
"""

import sys

import torch

device = sys.argv[1]
kind = device.partition(":")[0]
if kind == "npu":
    import torch_npu  # noqa: F401

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(16, 1)
).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler(kind)
inputs = torch.randn(32, 8, device=device)
targets = torch.randn(32, 1).to(device)
for _ in range(3):
    with torch.autocast(kind, enabled=kind == "npu"):
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print("loss", loss.item().hex())
print("weights", [p.sum().item().hex() for p in model.parameters()])
