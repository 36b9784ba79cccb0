# rules: 
import subprocess

subprocess.run(["echo", "nvidia-smi"])
print("run nvidia-smi to see the GPUs")
