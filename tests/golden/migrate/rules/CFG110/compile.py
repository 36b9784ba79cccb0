# rules: CFG110 CFG110
import torch
from transformers import TrainingArguments

model = torch.compile(torch.nn.Linear(2, 2), backend="inductor")
args = TrainingArguments(output_dir="out", torch_compile=True, torch_compile_backend="inductor")
