# rules:
#!/bin/bash
python train.py --optim adamw_torch --output_dir out  # paged_adamw_8bit on the GPU box
