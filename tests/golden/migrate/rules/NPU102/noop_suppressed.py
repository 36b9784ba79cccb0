# rules:
import torch

major, minor = torch.cuda.get_device_capability()  # ascendify: ignore[NPU102]
