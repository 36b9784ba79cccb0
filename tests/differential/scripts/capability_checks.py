"""Feature checks on the device's compute capability and properties, as mixed-precision trainers
make them; an Ascend branch of the project's own that imports torch_npu inside the function; device
strings built from the current device and passed to the calls being migrated; the device module
held in a variable. The CPU path is ``--cpu``."""

import argparse
import hashlib
import json

import torch
import torch.nn as nn


def pick_device(cpu, use_npu=False):
    if use_npu:
        import torch_npu  # the project's own Ascend branch

        return torch.device("npu", torch_npu.npu.current_device())
    if cpu or not torch.cuda.is_available():
        return torch.device("cpu")
    torch.cuda.set_device(0)
    return torch.device(f"cuda:{torch.cuda.current_device()}")


def compute_dtype(device):
    if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8:
        return torch.bfloat16  # Ampere and later
    return torch.float32


def tf32_capable(device):
    if device.type != "cuda":
        return False
    major, minor = torch.cuda.get_device_capability()
    props = torch.cuda.get_device_properties("cuda:{}".format(torch.cuda.current_device()))
    return (major, minor) >= (8, 0) and torch.cuda.get_device_properties(device).major >= 8 and props.total_memory > 0


parser = argparse.ArgumentParser()
parser.add_argument("--cpu", action="store_true")
args = parser.parse_args()
device = pick_device(args.cpu)
dtype = compute_dtype(device)
torch.backends.cuda.matmul.allow_tf32 = tf32_capable(device)
device_module = torch.cuda if device.type == "cuda" else torch.cpu
generator = torch.Generator().manual_seed(5)
batches = [(torch.rand(8, 6, generator=generator), torch.randint(0, 3, (8,), generator=generator))
           for _ in range(4)]  # fmt: skip
torch.manual_seed(3)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(device, dtype)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for inputs, labels in batches:
    if device.type == "cuda":
        inputs = inputs.cuda(f"cuda:{torch.cuda.current_device()}")
    loss = nn.functional.cross_entropy(model(inputs.to(device, dtype)), labels.to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    device_module.synchronize()
    losses.append(loss.item())
weights = repr([p.detach().cpu().tolist() for p in model.parameters()])
print(json.dumps({"device": device.type, "losses": losses,
                  "weights": hashlib.sha256(weights.encode()).hexdigest()}))  # fmt: skip
