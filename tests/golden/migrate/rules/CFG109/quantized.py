# rules: CFG109 CFG109
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig

config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained("model", quantization_config=config)
eight = AutoModelForCausalLM.from_pretrained("model", load_in_8bit=True)
