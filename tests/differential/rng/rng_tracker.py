"""A model-parallel RNG tracker in the shape Megatron-LM, DeepSpeed, fairscale, nanotron and apex
each carry: the state setter queues its work through torch.cuda._lazy_call and indexes
torch.cuda.default_generators; fork() swaps in a named state and restores the default one; an
activation checkpoint saves the RNG states of its forward and replays them in the recompute.

It prints one JSON line: numbers drawn inside and outside forks, and dropout masks of the forward
and of the checkpoint's recompute (they must be the same draw)."""

import contextlib
import json

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
        if device == -1:
            device = torch.device("cuda")
        elif isinstance(device, str):
            device = torch.device(device)
        elif isinstance(device, int):
            device = torch.device("cuda", device)

        def cb():
            idx = device.index
            if idx is None:
                idx = torch.cuda.current_device()
            default_generator = torch.cuda.default_generators[idx]
            default_generator.set_state(new_state)

    _lazy_call(cb)


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}

    def add(self, name, seed):
        orig_rng_state = torch.cuda.get_rng_state()
        torch.cuda.manual_seed(seed)
        self.states_[name] = torch.cuda.get_rng_state()
        _set_cuda_rng_state(orig_rng_state)

    def get_states(self):
        return {name: state.clone() for name, state in self.states_.items()}

    def set_states(self, states):
        self.states_ = states

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        orig_cuda_rng_state = torch.cuda.get_rng_state()
        _set_cuda_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = torch.cuda.get_rng_state()
            _set_cuda_rng_state(orig_cuda_rng_state)


_TRACKER = CudaRNGStatesTracker()


class CheckpointFunction(torch.autograd.Function):
    """Saves the forward's RNG states and replays them when it recomputes in backward."""

    @staticmethod
    def forward(ctx, run_function, *args):
        ctx.run_function = run_function
        ctx.fwd_cuda_rng_state = torch.cuda.get_rng_state()
        ctx.fwd_tracker_states = _TRACKER.get_states()
        with torch.no_grad():
            outputs = run_function(*args)
        ctx.save_for_backward(*args)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        inputs = [x.detach().requires_grad_(x.requires_grad) for x in ctx.saved_tensors]
        bwd_cuda_rng_state = torch.cuda.get_rng_state()
        bwd_tracker_states = _TRACKER.get_states()
        _set_cuda_rng_state(ctx.fwd_cuda_rng_state)
        _TRACKER.set_states(ctx.fwd_tracker_states)
        with torch.enable_grad():
            outputs = ctx.run_function(*inputs)
        _set_cuda_rng_state(bwd_cuda_rng_state)
        _TRACKER.set_states(bwd_tracker_states)
        torch.autograd.backward(outputs, grads)
        return (None, *(x.grad for x in inputs))


MASKS = []


def block(x):
    with _TRACKER.fork():
        mask = torch.nn.functional.dropout(torch.ones_like(x), p=0.5)
    MASKS.append(mask.detach().flatten().tolist())
    return (x * mask).sum(dim=1, keepdim=True)


def main():
    device = torch.device("cuda")
    torch.manual_seed(1234)
    torch.cuda.manual_seed(1234)
    _TRACKER.add("model-parallel-rng", 2718)
    drawn = {}
    with _TRACKER.fork():
        drawn["fork_1"] = torch.rand(4, device=device).tolist()
    drawn["default"] = torch.rand(4, device=device).tolist()
    with _TRACKER.fork():
        drawn["fork_2"] = torch.rand(4, device=device).tolist()
    state = torch.cuda.get_rng_state()
    drawn["again_1"] = torch.rand(4, device=device).tolist()
    torch.cuda.set_rng_state(state, "cuda")
    drawn["again_2"] = torch.rand(4, device=device).tolist()
    torch.cuda.set_rng_state(new_state=state, device="cuda:0")
    drawn["again_3"] = torch.rand(4, device=device).tolist()
    x = torch.rand(3, 6, device=device, requires_grad=True)
    out = CheckpointFunction.apply(block, x)
    out.sum().backward()
    print(
        json.dumps(
            {
                "device": device.type,
                "drawn": drawn,
                "masks": MASKS,
                "grad": x.grad.flatten().tolist(),
            }
        )
    )


if __name__ == "__main__":
    main()
