#!/bin/bash
# The GPU cluster's launch line: --ddp_backend nccl and apex's fused AdamW.
python hf_cli_trainer.py \
    --output_dir "$1" \
    --ddp_backend nccl \
    --optim adamw_apex_fused \
    --per_device_train_batch_size 8 \
    --max_steps 6 \
    --learning_rate 1e-2 \
    --logging_steps 1 \
    --save_strategy no \
    --report_to none \
    --seed 0
