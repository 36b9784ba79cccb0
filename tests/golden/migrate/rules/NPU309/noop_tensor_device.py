# rules:
import torch

device = inputs.device
dev = model.weight.device
device = settings_table.device_name
print("cuda", args.device)
