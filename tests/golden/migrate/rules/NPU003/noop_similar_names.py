# rules:
import flash_attention_helpers
from mylib.apex import tools
