# rules:
import logging

from utils import configure, move_to_device


def load(model, batch, logger):
    batch = move_to_device(batch, "cpu")
    configure(model, "cuda_ckpt.pt")
    logger.info("cuda")
    logging.info("cuda")
    return print("cuda"), str("cuda:0")
