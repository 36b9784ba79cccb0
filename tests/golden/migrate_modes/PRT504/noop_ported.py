# rules: PRT501 PRT501 PRT501
# modes: portable
from flash_attn import flash_attn_func

out = flash_attn_func(q, k, v)
# output
import torch

out = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), enable_gqa=True).transpose(1, 2)
