# rules: PRT504 PRT504
# modes: portable
from apex import amp
from flash_attn import flash_attn_varlen_func

out = flash_attn_varlen_func(q, k, v, cu, cu, 8, 8)
model, optimizer = amp.initialize(model, optimizer)
