import numpy
import torch as th
from torch import nn
from torch.utils.cpp_extension import load

fused = load(name="fused", sources=["csrc/ops.cpp", "csrc/kernel.cu"])  # expect: AN101 torch.utils.cpp_extension.load


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(8, 8)
        self.scale = th.ones(8, dtype=th.float64)  # expect: AN104 torch.float64
        self.mask = numpy.zeros(8, dtype="float64")  # expect: AN104 dtype='float64'

    @th.compile  # expect: AN102 torch.compile
    def forward(self, x: th.Tensor) -> th.Tensor:
        eigenvalues = th.linalg.eigvalsh(x @ x.T)
        return self.layer(x) + eigenvalues.mean()
