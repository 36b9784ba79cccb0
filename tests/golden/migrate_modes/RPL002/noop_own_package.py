# rules:
# modes: replace
# path: ascend_function/__init__.py
import torch

_Gamma = torch.distributions.Gamma


def draw(concentration, rate):
    return _Gamma(concentration.cpu(), rate.cpu()).rsample()
