# rules: CFG102 CFG102
# modes: portable
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",
    ddp_backend="nccl",
    seed=0,
)
inline = TrainingArguments(output_dir="out", ddp_backend="nccl")
# output
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",
    seed=0,
)
inline = TrainingArguments(output_dir="out")
