"""The same training with its arguments from the command line (HfArgumentParser), as run.sh gives
them."""

from tiny_bert import train
from transformers import HfArgumentParser, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
train(args)
