# rules:
from transformers import AutoModelForCausalLM

# flash_attention_2 on GPUs
model = AutoModelForCausalLM.from_pretrained("model", attn_implementation="sdpa")
