# rules: NPU307 NPU307 NPU308
import logging

from utils import configure, move_to_device, state_dict_to_device


def load(model, state_dict, batch, rank):
    state_dict = state_dict_to_device(state_dict, "cuda")
    batch = move_to_device(batch, f"cuda:{rank}" if rank is not None else "cpu")
    configure(model, "cuda:0")
    logging.info("cuda")
    return state_dict, batch, move_to_device(batch, "cuda_ckpt.pt")
# output
import logging

from utils import configure, move_to_device, state_dict_to_device


def load(model, state_dict, batch, rank):
    state_dict = state_dict_to_device(state_dict, "npu")
    batch = move_to_device(batch, f"npu:{rank}" if rank is not None else "cpu")
    configure(model, "cuda:0")
    logging.info("cuda")
    return state_dict, batch, move_to_device(batch, "cuda_ckpt.pt")
