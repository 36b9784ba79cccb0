# rules: NPU301 NPU301 NPU301
from transformers import AutoModelForCausalLM
from utils import move_batch


def load(path, batch):
    model = AutoModelForCausalLM.from_pretrained(path, device_map="cuda")
    pinned = AutoModelForCausalLM.from_pretrained(path, device_map={"": "cuda:0"})
    spread = AutoModelForCausalLM.from_pretrained(path, device_map="auto")
    batch = move_batch(batch, to_device="cuda:1")
    return model, pinned, spread, batch, "cuda"
# output
from transformers import AutoModelForCausalLM
from utils import move_batch


def load(path, batch):
    model = AutoModelForCausalLM.from_pretrained(path, device_map="npu")
    pinned = AutoModelForCausalLM.from_pretrained(path, device_map={"": "npu:0"})
    spread = AutoModelForCausalLM.from_pretrained(path, device_map="auto")
    batch = move_batch(batch, to_device="npu:1")
    return model, pinned, spread, batch, "cuda"
