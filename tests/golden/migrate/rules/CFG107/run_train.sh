# rules: CFG107 CFG107
#!/bin/bash
python train.py --optim paged_adamw_8bit --output_dir out
python train.py --optim adamw_bnb_8bit
