# rules:
# modes: portable
#!/bin/bash
python train.py --optim adamw_torch_fused --output_dir out
