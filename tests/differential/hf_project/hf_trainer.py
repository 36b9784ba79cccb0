"""A transformers Trainer script as it is written for NVIDIA GPUs: NCCL, TF32, apex's fused AdamW.

Usage: python hf_trainer.py OUTPUT_DIR
"""

import sys

from tiny_bert import train
from transformers import TrainingArguments

args = TrainingArguments(
    output_dir=sys.argv[1],
    ddp_backend="nccl",  # multi-GPU runs use NCCL
    tf32=True,
    optim="adamw_apex_fused",
    per_device_train_batch_size=8,
    max_steps=6,
    learning_rate=1e-2,
    logging_steps=1,
    save_strategy="no",
    report_to=[],
    seed=0,
)
train(args)
