# rules: CFG105 CFG105 CFG105
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",  # checkpoints
    tf32=True,  # Ampere
    bf16=True,
)
inline = TrainingArguments(output_dir="out", tf32=True)
first = TrainingArguments(tf32=True, output_dir="out")
# output
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",  # checkpoints
    bf16=True,
)
inline = TrainingArguments(output_dir="out")
first = TrainingArguments(output_dir="out")
