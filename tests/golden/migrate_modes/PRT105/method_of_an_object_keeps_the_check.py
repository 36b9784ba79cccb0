# rules: PRT102 PRT105
# modes: portable
import torch


class Markers:
    def push(self, name):
        torch.cuda.nvtx.range_push(name)


MARKERS = Markers()


def step(x):
    if torch.cuda.is_available():
        MARKERS.push("step")
    return x * 2
