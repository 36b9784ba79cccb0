# rules: CFG202
#!/bin/bash
accelerate launch --mixed_precision fp8 --num_processes 8 train.py
