# rules:
import os

print("set CUDA_VISIBLE_DEVICES before running")
name = "CUDA_VISIBLE_DEVICES"
table = {"CUDA_VISIBLE_DEVICES": 1}
