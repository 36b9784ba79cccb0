# rules: CFG102 CFG102
# modes: portable
#!/bin/bash
torchrun --nproc_per_node 8 train.py \
    --ddp_backend nccl \
    --output_dir out
python train.py --ddp_backend=nccl --seed 0
# output
#!/bin/bash
torchrun --nproc_per_node 8 train.py \
    --output_dir out
python train.py --seed 0
