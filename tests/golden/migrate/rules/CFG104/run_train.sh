# rules: CFG104
# modes: portable
#!/bin/bash
python train.py --optim adamw_apex_fused --output_dir out
# output
#!/bin/bash
python train.py --optim adamw_torch --output_dir out
