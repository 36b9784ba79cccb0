"""A transformers Trainer script as it is written for NVIDIA GPUs: NCCL, TF32, apex's fused AdamW.

Trains a tiny BERT built here (no download) for a few steps and prints its losses as JSON.
Usage: python hf_trainer.py OUTPUT_DIR
"""

import json
import sys

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)
config = BertConfig(
    vocab_size=64,
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    max_position_embeddings=16,
    num_labels=2,
)
model = BertForSequenceClassification(config)
tokens = torch.randint(0, 64, (32, 8), generator=torch.Generator().manual_seed(1))
data = [{"input_ids": row, "labels": int(row[0]) % 2} for row in tokens]

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
trainer = Trainer(model=model, args=args, train_dataset=data)
trainer.train()
print(json.dumps([entry["loss"] for entry in trainer.state.log_history if "loss" in entry]))
