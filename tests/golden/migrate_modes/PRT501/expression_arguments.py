# rules: PRT501 PRT501 PRT501 PRT501
# modes: portable
import torch
from flash_attn import flash_attn_func


def attend(q, k, v):
    return flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=True)


def attend2(q, k, v):
    return flash_attn_func(q, k[:, :4], v, dropout_p=0.0, causal=True)
# output
import torch
import torch.nn.attention.bias


def attend(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention((attention_q := q.transpose(1, 2)).transpose(1, 2), (attention_k := k.transpose(1, 2)).transpose(1, 2), v.transpose(1, 2).transpose(1, 2), attn_mask=torch.nn.attention.bias.causal_lower_right(attention_q.shape[1], attention_k.shape[1]), enable_gqa=True).transpose(1, 2)


def attend2(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), (attention_k := k[:, :4]).transpose(1, 2), v.transpose(1, 2), attn_mask=torch.nn.attention.bias.causal_lower_right(q.shape[1], attention_k.shape[1]), dropout_p=0.0, enable_gqa=True).transpose(1, 2)
