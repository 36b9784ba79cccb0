# rules: NPU001 NPU010 NPU010 NPU010 NPU010
from flash_attn import flash_attn_func, flash_attn_qkvpacked_func


class Attention:
    def forward(self, q, k, v, qkv, attention_q):
        out = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal=True)
        packed = flash_attn_qkvpacked_func(self.proj(qkv).view(2, 8, 3, 4, 16))
        return out.transpose(1, 2), packed, attention_q
# output
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch


class Attention:
    def forward(self, q, k, v, qkv, attention_q):
        out = torch_npu.npu_fusion_attention((attention_q1 := q.transpose(1, 2)), k.transpose(1, 2), v.transpose(1, 2), attention_q1.shape[2], "BSND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool, device=attention_q1.device).triu(1), scale=attention_q1.shape[-1] ** -0.5, sparse_mode=3)[0]
        packed = torch_npu.npu_fusion_attention(*(attention_qkv := self.proj(qkv).view(2, 8, 3, 4, 16)).unbind(2), attention_qkv.shape[3], "BSND", scale=attention_qkv.shape[-1] ** -0.5)[0]
        return out.transpose(1, 2), packed, attention_q
