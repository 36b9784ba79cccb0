# rules: CFG101 CFG101
from transformers import TrainingArguments

raw = TrainingArguments(output_dir="out", ddp_backend=r"nccl")
long = TrainingArguments(output_dir="out", ddp_backend="""nccl""")
pieces = TrainingArguments(output_dir="out", ddp_backend="nc" "cl")
# output
from transformers import TrainingArguments

raw = TrainingArguments(output_dir="out", ddp_backend=r"hccl")
long = TrainingArguments(output_dir="out", ddp_backend="""hccl""")
pieces = TrainingArguments(output_dir="out", ddp_backend="nc" "cl")
