# rules:
# modes: portable
#!/bin/bash
python train.py --ddp_backend gloo --seed 0
