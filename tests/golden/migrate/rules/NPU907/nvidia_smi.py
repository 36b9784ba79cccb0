# rules: NPU907 NPU907
import os
import subprocess

out = subprocess.check_output(["nvidia-smi", "-L"])
os.system("nvidia-smi --query-gpu=name --format=csv")
