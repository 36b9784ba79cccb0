# rules:
import os

os.environ["MY_CUDA_FLAG"] = "1"
