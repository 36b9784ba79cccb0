# rules: CFG101 CFG101
#!/bin/bash
# Launch: --ddp_backend nccl is what the GPU cluster used
torchrun --nproc_per_node 8 train.py \
    --ddp_backend nccl \
    --output_dir out
python train.py --ddp-backend=nccl --ddp_backend "$BACKEND"  # $BACKEND is chosen elsewhere
# output
#!/bin/bash
# Launch: --ddp_backend nccl is what the GPU cluster used
torchrun --nproc_per_node 8 train.py \
    --ddp_backend hccl \
    --output_dir out
python train.py --ddp-backend=hccl --ddp_backend "$BACKEND"  # $BACKEND is chosen elsewhere
