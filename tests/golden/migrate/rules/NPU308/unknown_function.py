# rules: NPU308 NPU308
from serving import launch_worker
import engine


def start(model):
    launch_worker(model, "cuda")
    return engine.build(model, "cuda:1")
