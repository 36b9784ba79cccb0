# rules: 
# modes: portable
import torch

flags.is_cuda_build = True
