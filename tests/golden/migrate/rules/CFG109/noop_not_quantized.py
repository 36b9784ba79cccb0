# rules:
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained("model", load_in_4bit=False)
