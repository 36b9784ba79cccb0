"""The training both scripts of this folder run: a tiny BERT built here (no download), a few steps,
its losses printed as JSON on the last line."""

import json

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments


def train(args: TrainingArguments) -> None:
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
    trainer = Trainer(model=model, args=args, train_dataset=data)
    trainer.train()
    print(json.dumps([entry["loss"] for entry in trainer.state.log_history if "loss" in entry]))
