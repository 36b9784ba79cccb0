# rules:
from transformers import TrainingArguments

options = dict(ddp_backend="nccl")
TrainingArguments(output_dir="out", ddp_backend=options["ddp_backend"])
