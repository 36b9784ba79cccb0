# rules:
from serving import launch_worker


def start(model, logger, table):
    logger.warning("cuda")
    table.add_row("cuda", "ok")
    return launch_worker(model, "cuda graphs"), launch_worker(model, backend="cuda_ipc")
