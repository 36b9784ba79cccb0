# rules: PRT102 PRT102 PRT105 PRT105 PRT105
# modes: portable
import torch


def _capability():
    return torch.cuda.get_device_capability()


def _cuda_marker():
    return torch.cuda.nvtx.range_push("state")


class Tracker:
    def __init__(self):
        self.use_cuda = torch.cuda.is_available()

    def state(self):
        if self.use_cuda:
            return _cuda_marker()
        return None

    def capability(self):
        if torch.cuda.is_available():
            return self._capability()
        return None

    def _capability(self):
        return _capability()


def total_memory():
    return [_capability() for _ in range(torch.cuda.device_count())]
