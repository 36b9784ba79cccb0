# rules:
#!/bin/bash
# ddp_backend nccl on GPUs, hccl here
torchrun --nproc_per_node 8 train.py --ddp_backend hccl --output_dir out
python train.py --ddp_backend gloo
echo "--ddp_backend" "nccl"
