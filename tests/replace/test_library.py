"""Every catalogue function against the original on the CPU, over generated inputs, forward and backward.

Exact composites must stay within the catalogue's stated tolerance (float64 100 000 times tighter);
fallbacks must be bitwise equal, random draws included. Dtypes and shapes must match; where the
original raises, the replacement raises the same kind of error.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from ascendify.replace import CATALOGUE, Kind, Replacement
from tests.replace._cases import CASES, Case, Cases

ENTRIES = {entry.function: entry for entry in CATALOGUE}
PARAMS = [
    pytest.param(name, case, id=f"{name}-{case.label}")
    for name, cases in CASES.items()
    for case in cases.cases
]


def fresh(value: Any, grad: bool) -> Any:
    """A copy of the case's inputs (float tensors require grad when ``grad``)."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(grad and copy.is_floating_point() and copy.numel() > 0)
    if isinstance(value, tuple | list):
        return type(value)(fresh(item, grad) for item in value)
    if isinstance(value, dict):
        return {key: fresh(item, grad) for key, item in value.items()}
    return value


def tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple | list):
        return [t for item in value for t in tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors(item)]
    return []


def call(
    function: Any, case: Case, grad: bool
) -> tuple[Any, list[torch.Tensor], BaseException | None]:
    args, kwargs = fresh(case.args, grad), fresh(case.kwargs, grad)
    if case.seeded:
        torch.manual_seed(2024)
    try:
        result = function(*args, **kwargs)
    except (RuntimeError, ValueError, TypeError) as error:
        return None, [], error
    return result, tensors((args, kwargs)), None


def tolerance(entry: Replacement, dtype: torch.dtype) -> dict[str, float]:
    if entry.kind is Kind.FALLBACK or not dtype.is_floating_point:
        return {"rtol": 0.0, "atol": 0.0}
    scale = 1e-5 if dtype == torch.float64 else 1.0
    return {"rtol": entry.rtol * scale, "atol": entry.atol * scale}


def assert_same(
    ours: list[torch.Tensor], theirs: list[torch.Tensor], entry: Replacement, what: str
) -> None:
    assert len(ours) == len(theirs), what
    for index, (mine, original) in enumerate(zip(ours, theirs, strict=True)):
        assert mine.dtype == original.dtype, f"{what} {index}: dtype"
        assert mine.shape == original.shape, f"{what} {index}: shape"
        torch.testing.assert_close(
            mine, original, equal_nan=True, msg=lambda m, i=index: f"{what} {i}: {m}",
            **tolerance(entry, original.dtype),
        )  # fmt: skip


def gradients(result: Any, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    outputs = [t for t in tensors(result) if t.requires_grad]
    leaves = [t for t in inputs if t.requires_grad]
    if not outputs or not leaves:
        return []
    weights = torch.Generator().manual_seed(99)
    total = sum((o * torch.randn(o.shape, generator=weights, dtype=o.dtype)).sum() for o in outputs)
    found = torch.autograd.grad(total, leaves, allow_unused=True)
    return [
        torch.zeros_like(leaf) if g is None else g for g, leaf in zip(found, leaves, strict=True)
    ]


@pytest.mark.parametrize(("name", "case"), PARAMS)
def test_replacement_matches_the_original(name: str, case: Case) -> None:
    cases: Cases = CASES[name]
    entry = ENTRIES[name]
    theirs, their_inputs, their_error = call(cases.original, case, case.backward)
    ours, our_inputs, our_error = call(cases.replacement, case, case.backward)
    if their_error is not None:
        assert isinstance(our_error, type(their_error)), (
            f"the original raised {their_error!r}, we {our_error!r}"
        )
        return
    assert our_error is None, f"the original worked, we raised {our_error!r}"
    assert type(ours) is type(theirs)
    if case.compared is not None:
        ours, theirs = case.compared(ours), case.compared(theirs)
    assert_same(tensors(ours), tensors(theirs), entry, "output")
    if case.backward:
        their_grads = gradients(theirs, their_inputs)
        assert their_grads, "a differentiable case must have gradients"
        assert_same(gradients(ours, our_inputs), their_grads, entry, "gradient")


def test_every_catalogue_function_has_cases() -> None:
    assert set(CASES) == set(ENTRIES)
    assert sum(len(cases.cases) for cases in CASES.values()) < 400  # the fast loop stays fast
    for name, cases in CASES.items():
        assert any(case.backward for case in cases.cases) or name in NOT_DIFFERENTIABLE, name


NOT_DIFFERENTIABLE = {"histogram", "poisson", "Poisson", "Binomial"}  # counts
