"""A trainer that handles the NPU itself (as transformers' and accelerate's users do) and has
CUDA-only logic around its CUDA branch: half precision where the device is "cuda". Migrated, the
CUDA logic must stay CUDA's: on an NPU host the script takes its own NPU path and trains as on the
CPU. It prints one JSON line: the device it chose and the losses."""

import json

import torch


def is_npu_available():
    try:
        import torch_npu  # noqa: F401
    except ImportError:
        return False
    return torch.npu.is_available()


def get_device():
    if is_npu_available():
        return "npu"
    elif torch.cuda.is_available():
        return "cuda"
    return "cpu"


def prepare(model, device):
    if device == "cuda":
        torch.backends.cudnn.benchmark = True
        model = model.half()
    if device != "cuda":
        return model.to(device)
    torch.cuda.set_device(0)
    return model.cuda()


def main():
    device = get_device()
    torch.manual_seed(0)
    model = prepare(torch.nn.Linear(4, 2), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(3):
        inputs = torch.rand(5, 4, generator=generator).to(device)
        loss = model(inputs).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(json.dumps({"device": device, "losses": losses}))


if __name__ == "__main__":
    main()
