# rules: CFG105 CFG105 CFG105
#!/bin/bash
torchrun --nproc_per_node 8 train.py \
    --tf32 True \
    --bf16 True \
    --output_dir out
python train.py --tf32 --output_dir out
python train.py --output_dir out --tf32=true
# output
#!/bin/bash
torchrun --nproc_per_node 8 train.py \
    --bf16 True \
    --output_dir out
python train.py --output_dir out
python train.py --output_dir out
