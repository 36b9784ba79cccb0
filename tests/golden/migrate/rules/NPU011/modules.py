# rules: NPU003 NPU011
from flash_attn.modules.mha import FlashSelfAttention

attention = FlashSelfAttention(causal=True, softmax_scale=0.125)
