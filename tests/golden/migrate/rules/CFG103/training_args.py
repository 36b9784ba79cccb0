# rules: CFG103
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", optim="adamw_apex_fused")
# output
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", optim="adamw_torch_npu_fused")
