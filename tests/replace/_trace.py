"""Which aten operators a call runs, and which of them a torch_npu release has no NPU kernel for.

The call runs on the CPU under a dispatch mode (forward and backward). Operators that torch implements
for every device (``CompositeExplicitAutograd`` and ``...NonFunctional`` registrations) are followed
into the operators they call, as they would run on the NPU without a kernel of their own; torch's
``CompositeImplicitAutograd`` operators have decomposed before the mode sees anything. What is left
needs a kernel: one the release's data does not list falls back to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch._C import DispatchKey, DispatchKeySet
from torch.utils._python_dispatch import TorchDispatchMode

from ascendify.targets import TorchNpuFacts, available_versions, load_facts

_IMPLICIT = "CompositeImplicitAutograd"  # seen when a kernel calls it below autograd (``item``)
_COMPOSITE = (_IMPLICIT, "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
# Overloads every known release has an NPU kernel for: what their composites call never matters.
_EVERYWHERE = frozenset.intersection(
    *(load_facts(version).aten_ops_with_npu_kernel for version in available_versions())
)


@dataclass(frozen=True)
class TracedOp:
    name: str  # "aten::addmm"
    parents: tuple[str, ...]  # the composite operators it was called from, outermost first
    composite: bool  # runs on any device through the operators it calls (recorded too, or known)


class _Recorder(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.ops: list[TracedOp] = []
        self._parents: list[str] = []

    def __torch_dispatch__(
        self,
        func: Any,
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        name = func.name()
        composite = next(
            (
                key
                for key in _COMPOSITE
                if torch._C._dispatch_has_kernel_for_dispatch_key(name, key)
            ),
            None,
        )
        follow = (
            composite is not None
            and _overload(name) not in _EVERYWHERE
            and self._parents[-1:] != [name]  # detach's composite calls detach
        )
        self.ops.append(TracedOp(name, tuple(self._parents), composite is not None))
        if not follow:
            return func(*args, **kwargs)
        self._parents.append(name)
        try:
            with self:  # run the composite kernel itself, so that the mode sees what it calls
                if composite == _IMPLICIT:
                    return func.decompose(*args, **kwargs)
                keys = DispatchKeySet(getattr(DispatchKey, composite))
                return func.redispatch(keys, *args, **kwargs)
        finally:
            self._parents.pop()


def trace(call: Callable[[], Any]) -> list[TracedOp]:
    """The operators ``call`` runs (it should run backward itself if backward matters)."""
    recorder = _Recorder()
    with recorder:
        call()
    return recorder.ops


def without_npu_kernel(ops: list[TracedOp], facts: TorchNpuFacts) -> set[str]:
    """Overloads (``"lgamma"``, ``"histogram.bin_ct"``) that would fall back to the CPU on ``facts``.

    An operator reached inside a composite whose own overload has an NPU kernel does not run there.
    """
    found = set()
    for op in ops:
        overload = _overload(op.name)
        if op.composite or not op.name.startswith("aten::") or facts.has_npu_kernel(overload):
            continue
        if not any(facts.has_npu_kernel(_overload(parent)) for parent in op.parents):
            found.add(overload)
    return found


def _overload(name: str) -> str:
    return name.partition("::")[2]
