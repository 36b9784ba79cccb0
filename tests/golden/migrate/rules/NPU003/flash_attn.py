# rules: NPU003 NPU003
from flash_attn import flash_attn_func
import xformers.ops as xops
