# rules: CFG106
# modes: portable
from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", tf32=True)
