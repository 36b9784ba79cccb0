# rules: CFG101 CFG101
from transformers import Seq2SeqTrainingArguments, TrainingArguments

# the cluster used nccl; ddp_backend="nccl" in this comment stays
args = TrainingArguments(
    output_dir="out",
    ddp_backend="nccl",  # multi-node
)
eval_args = Seq2SeqTrainingArguments(output_dir="eval", ddp_backend='nccl')
print("ddp_backend=nccl")
# output
from transformers import Seq2SeqTrainingArguments, TrainingArguments

# the cluster used nccl; ddp_backend="nccl" in this comment stays
args = TrainingArguments(
    output_dir="out",
    ddp_backend="hccl",  # multi-node
)
eval_args = Seq2SeqTrainingArguments(output_dir="eval", ddp_backend='hccl')
print("ddp_backend=nccl")
