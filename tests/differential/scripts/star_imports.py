"""A trainer that gets torch and nn only through ``from star_common import *`` (a package of the
project that imports them), as small research repositories do. The CPU path is ``--cpu``."""

import argparse
import hashlib
import json

from star_common import *

parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
use_gpu = torch.cuda.is_available() and not args.cpu
device = torch.device("cuda" if use_gpu else "cpu")
if use_gpu:
    torch.cuda.manual_seed(0)
model = make_model()
if use_gpu:
    model = model.cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
generator = torch.Generator().manual_seed(8)
losses = []
for _ in range(4):
    inputs = torch.rand(6, 5, generator=generator).to(device)
    labels = torch.randint(0, 2, (6,), generator=generator).to(device)
    loss = nn.functional.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if use_gpu:
        torch.cuda.synchronize()
    losses.append(loss.item())
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device.type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
