"""The catalogue against the facts: which APIs the data says the NPU cannot run, and composites that
use only operators the NPU has kernels for (traced on the CPU, forward and backward)."""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest
import torch

from ascendify.auto._resolve import resolve
from ascendify.replace import (
    CATALOGUE,
    PACKAGE,
    Kind,
    Replacement,
    library,
    library_source,
    replacement_for,
)
from ascendify.targets import available_versions, load_facts
from tests.replace._cases import CASES, Case
from tests.replace._trace import trace, without_npu_kernel
from tests.replace.test_library import fresh, gradients

VERSIONS = available_versions()
EXACT = [entry for entry in CATALOGUE if entry.kind is Kind.EXACT]


def run(function: Any, case: Case, backward: bool) -> None:
    args, kwargs = fresh(case.args, backward), fresh(case.kwargs, backward)
    try:
        result = function(*args, **kwargs)
    except (RuntimeError, ValueError):
        return  # singular and other bad inputs: what ran up to the error is traced
    if backward:
        gradients(result, [t for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor)])


def test_catalogue_has_at_least_15_functions_with_stable_codes() -> None:
    codes = [entry.code for entry in CATALOGUE]
    assert len(CATALOGUE) >= 15
    assert len(set(codes)) == len(codes)
    assert all(re.fullmatch(r"ASF\d{3}", code) for code in codes)
    apis = [api for entry in CATALOGUE for api in entry.apis]
    assert len(set(apis)) == len(apis), "an API is replaced by one function only"
    for entry in CATALOGUE:
        assert entry.kernels, entry.code
        assert (entry.rtol > 0) == (entry.kind is Kind.EXACT), "exact entries state a tolerance"


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.function)
def test_entry_names_real_apis_and_a_documented_function(entry: Replacement) -> None:
    function = getattr(library, entry.function)
    doc = function.__doc__ or ""
    for section in ("What it does:", "Why:", "Example:", "Fix safety:"):
        assert section in doc, f"{entry.function}: {section}"
    assert f"Fix safety: {entry.kind.value}" in " ".join(doc.split())
    first, *aliases = (resolve(api) for api in entry.apis)
    case = CASES[entry.function].cases[0]
    for alias in aliases:  # torch.inverse is torch.linalg.inv, ...: the same results
        if alias is not first:
            assert not isinstance(alias, type)
            torch.testing.assert_close(alias(*case.args), first(*case.args), rtol=0, atol=0)


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.function)
def test_declared_kernels_are_what_the_original_runs(entry: Replacement) -> None:
    """Traced on the CPU, the original falls back exactly where the catalogue says it does."""
    case = CASES[entry.function].cases[0]
    ops = trace(lambda: run(CASES[entry.function].original, case, backward=False))
    for version in VERSIONS:
        facts = load_facts(version)
        if any(facts.has_npu_kernel(kernel) for kernel in entry.covered_by):
            assert not entry.unsupported(facts)
            continue  # an NPU kernel above what the CPU trace can see runs the API
        missing = without_npu_kernel(ops, facts)
        assert missing <= set(entry.kernels), f"{version}: {missing - set(entry.kernels)}"
        assert bool(missing) == entry.unsupported(facts), version


@pytest.mark.parametrize("entry", EXACT, ids=lambda e: e.function)
def test_exact_composites_use_only_operators_with_npu_kernels(entry: Replacement) -> None:
    replaced_in = [v for v in VERSIONS if entry.unsupported(load_facts(v))]
    assert replaced_in
    for case in CASES[entry.function].cases:
        ops = trace(lambda case=case: run(CASES[entry.function].replacement, case, case.backward))
        assert ops, case.label
        for version in replaced_in:
            assert not without_npu_kernel(ops, load_facts(version)), f"{case.label} on {version}"


def test_support_differs_between_versions() -> None:
    """torch_npu 2.13 registers linalg_cholesky: cholesky is replaced for 2.8.0 only."""
    older, newer = load_facts("2.8.0"), load_facts("2.13.0")
    assert replacement_for("torch.linalg.cholesky", older) is not None
    assert replacement_for("torch.linalg.cholesky", newer) is None
    assert replacement_for("torch.lgamma", newer) is not None
    assert replacement_for("torch.lgamma.__name__", newer) is None
    assert replacement_for("torch.cummax", newer) is None  # _cummax_helper has NPU kernels


def test_generated_module_holds_only_what_is_used() -> None:
    text = library_source(["Gamma", "linalg_det"])
    module = ast.parse(text)
    defined = {
        node.name for node in module.body if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    assert defined == {"Gamma", "linalg_det", "_lu_pivots"}
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(module)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (
            node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")]
        )
    }
    assert "ascendify" not in imported
    namespace: dict[str, Any] = {}
    exec(compile(text, f"{PACKAGE}/__init__.py", "exec"), namespace)
    assert namespace["__all__"] == ["Gamma", "linalg_det"]
    matrix = torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert namespace["linalg_det"](matrix) == library.linalg_det(matrix)
    with pytest.raises(KeyError, match="not_there"):
        library_source(["not_there"])


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.function)
def test_each_function_works_alone_in_a_generated_module(entry: Replacement) -> None:
    namespace: dict[str, Any] = {"__name__": PACKAGE}
    exec(compile(library_source([entry.function]), f"{PACKAGE}/__init__.py", "exec"), namespace)
    case = CASES[entry.function].cases[0]
    generated, ours = (
        _call_or_sample(function, case)
        for function in (namespace[entry.function], getattr(library, entry.function))
    )
    torch.testing.assert_close(generated, ours, rtol=0, atol=0, equal_nan=True)


def _call_or_sample(function: Any, case: Case) -> Any:
    """The function's result, or a seeded sample of the distribution it builds."""
    kwargs = {key: value for key, value in case.kwargs.items() if key not in ("value", "shape")}
    torch.manual_seed(5)
    result = function(*case.args, **kwargs)
    if isinstance(result, torch.distributions.Distribution):
        torch.manual_seed(5)
        return result.sample()
    return result
