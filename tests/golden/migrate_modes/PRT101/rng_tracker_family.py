# rules: PRT001 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101 PRT101
# modes: portable
import contextlib

import torch
from torch import _C
from torch.cuda import _lazy_call
from torch.cuda import device as device_ctx_manager


def _set_cuda_rng_state(new_state, device=-1):
    if hasattr(_C, "_cuda_setRNGState") and callable(_C._cuda_setRNGState):

        def cb():
            with device_ctx_manager(device):
                _C._cuda_setRNGState(new_state)

    else:

        def cb():
            torch.cuda.default_generators[0].set_state(new_state)

    _lazy_call(cb)


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}

    def add(self, name, seed):
        orig_rng_state = torch.cuda.get_rng_state()
        torch.cuda.manual_seed(seed)
        self.states_[name] = torch.cuda.get_rng_state()
        _set_cuda_rng_state(orig_rng_state)

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        orig_cuda_rng_state = torch.cuda.random.get_rng_state()
        _set_cuda_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = torch.cuda.get_rng_state()
            _set_cuda_rng_state(orig_cuda_rng_state)


_TRACKER = CudaRNGStatesTracker()


def set_random_seed(seed):
    torch.manual_seed(seed)
    if torch.cuda.device_count() > 0:
        torch.cuda.manual_seed(seed)
        _TRACKER.add("model-parallel-rng", seed + 2718)
# output
import contextlib

import torch
from torch import _C
from portable_device import lazy_call as _lazy_call
from portable_device import device_scope as device_ctx_manager
import portable_device


def _set_cuda_rng_state(new_state, device=-1):
    if hasattr(_C, "_cuda_setRNGState") and callable(portable_device.set_rng_state):

        def cb():
            with device_ctx_manager(device):
                portable_device.set_rng_state(new_state)

    else:

        def cb():
            portable_device.default_generators()[0].set_state(new_state)

    _lazy_call(cb)


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}

    def add(self, name, seed):
        orig_rng_state = portable_device.get_rng_state()
        portable_device.seed_rng_state(seed)
        self.states_[name] = portable_device.get_rng_state()
        _set_cuda_rng_state(orig_rng_state)

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        orig_cuda_rng_state = portable_device.get_rng_state()
        _set_cuda_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = portable_device.get_rng_state()
            _set_cuda_rng_state(orig_cuda_rng_state)


_TRACKER = CudaRNGStatesTracker()


def set_random_seed(seed):
    torch.manual_seed(seed)
    if portable_device.device_count() > 0:
        portable_device.manual_seed(seed)
        _TRACKER.add("model-parallel-rng", seed + 2718)
