"""CUDA graphs: ``torch.cuda.CUDAGraph`` and its helpers map to NPU graphs."""

from __future__ import annotations

from ascendify.migrate._rule import Rule
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety


class CudaGraph(Rule):
    """What it does: rewrites ``torch.cuda.CUDAGraph`` to ``torch_npu.npu.NPUGraph`` and
    ``torch.cuda.graph``, ``graph_pool_handle`` and ``make_graphed_callables`` to their
    ``torch_npu.npu`` counterparts.

    Why: torch_npu captures graphs with ``NPUGraph``; there is no ``torch.npu.CUDAGraph`` (a name
    other converters emit, which fails at run time).

    Example: ``g = torch.cuda.CUDAGraph()`` becomes ``g = torch_npu.npu.NPUGraph()``.

    Fix safety: unsafe: torch_npu documents NPU graph capture for inference only, so captured
    training steps must be checked.
    """

    code = "NPU701"
    name = "cuda-graph"
    summary = "CUDA graph -> NPU graph (inference only on NPU)"
    safety = Safety.UNSAFE
    triggers = (b"cuda",)


api_family(
    (
        "torch.cuda.CUDAGraph",
        "torch.cuda.graph",
        "torch.cuda.graphs",
        "torch.cuda.graph_pool_handle",
        "torch.cuda.make_graphed_callables",
    ),
    {Safety.UNSAFE: CudaGraph},
)
