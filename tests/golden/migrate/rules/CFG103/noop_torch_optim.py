# rules:
from transformers import TrainingArguments

# adamw_apex_fused was faster on V100
args = TrainingArguments(output_dir="out", optim="adamw_torch")
