# rules: CFG108
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained(
    "model", attn_implementation="flash_attention_2", torch_dtype="bfloat16"
)
