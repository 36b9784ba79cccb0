# rules:
import torch


def fork_cpu(states, seed):
    saved = torch.get_rng_state()
    torch.set_rng_state(states["cpu"])
    torch.random.manual_seed(seed)
    generator = torch.default_generator
    drawn = torch.rand(2, generator=generator)
    torch.set_rng_state(saved)
    return drawn, "cuda_rng_state.pt"
