# rules:
#!/bin/bash
python train.py --tf32 False --output_dir out  # --tf32 True needs Ampere
