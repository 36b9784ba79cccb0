# rules: 
# modes: portable
from library import move_to_device


def to_device(obj, where):
    return obj


batch = move_to_device([1, 2], "cpu")
label = move_to_device([1, 2], "cuda_ckpt.pt")
