"""APIs that static analysis reports although migration leaves them alone (no CUDA -> NPU mapping applies).

Mappings and the caveats of mapped namespaces live in :mod:`ascendify.targets.apis` (which wins); this table
holds only what is worth knowing before a run on the NPU and has no place there. A key covers the name and
everything under it (``torch.compiler`` covers ``torch.compiler.disable``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caveat:
    code: str
    tips: str


CAVEATS: dict[str, Caveat] = {
    "torch.jit.script_method": Caveat(
        "AN102", "torch_npu's runtime shim turns torch.jit.script_method into a no-op"
    ),
    "torch.compile": Caveat(
        "AN102",
        "torch.compile on the NPU needs torch_npu's backend and is fragile; "
        "validate the model without it first",
    ),
    "torch.compiler": Caveat("AN102", "torch.compiler APIs are not supported by torch_npu"),
    "torch.channels_last": Caveat(
        "AN102",
        "channels_last is not supported by torch_npu's runtime shim; NPU kernels choose their "
        "own formats",
    ),
    "torch.utils._triton.has_triton": Caveat(
        "AN102", "reports False on the NPU: Triton code paths are skipped"
    ),
    "triton.jit": Caveat(
        "AN103", "Triton kernel: does not run on the NPU as written; port it or use torch ops"
    ),
    "triton.autotune": Caveat("AN103", "Triton kernel: does not run on the NPU as written"),
}

# Qualified names that mean float64 (the dtype objects and the legacy typed tensors).
DOUBLE_NAMES = frozenset(
    {
        "torch.float64",
        "torch.double",
        "torch.complex128",
        "torch.cdouble",
        "torch.DoubleTensor",
        "torch.cuda.DoubleTensor",
        "numpy.float64",
        "numpy.double",
        "numpy.complex128",
    }
)
DOUBLE_METHODS = frozenset({"double"})  # tensor.double()
DOUBLE_STRINGS = frozenset({"float64", "double", "torch.float64", "torch.DoubleTensor"})


def caveat_for(qualified_name: str) -> Caveat | None:
    name = qualified_name
    while name:
        caveat = CAVEATS.get(name)
        if caveat is not None:
            return caveat
        name = name.rpartition(".")[0]
    return None
