# rules: NPU902 NPU902
import torch

with torch.backends.cuda.sdp_kernel(enable_flash=True):
    pass
torch.backends.cuda.enable_flash_sdp(False)
