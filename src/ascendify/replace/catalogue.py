"""The catalogue of replacements: which PyTorch APIs ``ascend_function`` replaces, how, and when.

Pure data (no torch): ``ascendify migrate -sim`` reads it to rewrite calls, ``ascendify.auto`` to patch torch.
The replacement code itself is :mod:`ascendify.replace.library`; each entry names one of its functions.

An API is replaced for a torch_npu version only when that version's generated data says the NPU cannot
run it: some aten overload it reaches (``kernels``: as a trace of the original on the CPU shows them, once
torch's composite operators have decomposed) has no NPU kernel, and torch_npu registers no kernel either
for an operator on the way there (``covered_by``: e.g. ``linalg_cholesky`` from 2.13 on).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ascendify.targets.facts import TorchNpuFacts

PACKAGE = "ascend_function"  # what the result imports; never an import of ascendify


class Kind(str, Enum):
    EXACT = "exact"  # a composite of operators with NPU kernels
    FALLBACK = "fallback"  # the original on the CPU, moved back: slow, explicitly marked


@dataclass(frozen=True)
class Replacement:
    code: str  # stable, never reused: "ASF001"
    function: str  # its name in ascend_function (and in ascendify.replace.library)
    apis: tuple[str, ...]  # the qualified names whose calls it replaces
    kind: Kind
    kernels: tuple[str, ...]  # aten overloads the original needs an NPU kernel for
    covered_by: tuple[str, ...] = ()  # overloads whose NPU kernel runs the API without them
    # Stated tolerance against the original on the CPU, for values and gradients in float32 (float64:
    # 100 000 times tighter): |ours - original| <= atol + rtol * |original|. Fallbacks are bitwise:
    # they run the original.
    rtol: float = 0.0
    atol: float = 0.0

    def unsupported(self, facts: TorchNpuFacts) -> bool:
        """Whether this torch_npu release cannot run the original API on the NPU."""
        if any(facts.has_npu_kernel(kernel) for kernel in self.covered_by):
            return False
        return not all(facts.has_npu_kernel(kernel) for kernel in self.kernels)

    def reference(self) -> str:
        return f"{PACKAGE}.{self.function}"


def _fallback(
    code: str, function: str, apis: tuple[str, ...], kernel: str, covered_by: tuple[str, ...] = ()
) -> Replacement:
    return Replacement(code, function, apis, Kind.FALLBACK, (kernel,), covered_by)


_DISTRIBUTIONS = "torch.distributions"

CATALOGUE: tuple[Replacement, ...] = (
    Replacement(
        "ASF001", "linalg_cholesky", ("torch.linalg.cholesky",), Kind.EXACT,
        ("linalg_cholesky_ex.L",), ("linalg_cholesky", "linalg_cholesky_ex"), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF002", "linalg_inv", ("torch.linalg.inv", "torch.inverse"), Kind.EXACT,
        ("linalg_inv_ex.inverse",), ("linalg_inv", "linalg_inv_ex"), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF003", "linalg_det", ("torch.linalg.det", "torch.det"), Kind.EXACT,
        ("_linalg_det.result",), ("linalg_det", "_linalg_det"), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF004", "linalg_slogdet", ("torch.linalg.slogdet", "torch.slogdet"), Kind.EXACT,
        ("_linalg_slogdet.sign",), ("linalg_slogdet", "_linalg_slogdet"), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF005", "linalg_solve", ("torch.linalg.solve",), Kind.EXACT,
        ("_linalg_solve_ex.result",), ("linalg_solve", "_linalg_solve_ex"), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF006", "MultivariateNormal",
        (f"{_DISTRIBUTIONS}.MultivariateNormal",
         f"{_DISTRIBUTIONS}.multivariate_normal.MultivariateNormal"),
        Kind.EXACT, ("linalg_cholesky_ex.L",), ("linalg_cholesky_ex",), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF007", "logcumsumexp", ("torch.logcumsumexp",), Kind.EXACT,
        ("_logcumsumexp",), ("logcumsumexp",), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF008", "lgamma", ("torch.lgamma", "torch.special.gammaln"), Kind.EXACT,
        ("lgamma.out",), ("lgamma",), rtol=1e-4, atol=1e-5,
    ),
    Replacement(
        "ASF009", "digamma", ("torch.digamma", "torch.special.digamma", "torch.special.psi"),
        Kind.EXACT, ("digamma.out",), ("digamma",), rtol=1e-4, atol=1e-5,
    ),
    _fallback(
        "ASF101", "linalg_eigh", ("torch.linalg.eigh",), "_linalg_eigh.eigenvalues",
        ("linalg_eigh", "_linalg_eigh"),
    ),
    _fallback(
        "ASF102", "linalg_eigvalsh", ("torch.linalg.eigvalsh",), "_linalg_eigh.eigenvalues",
        ("linalg_eigvalsh", "_linalg_eigh"),
    ),
    _fallback(
        "ASF105", "polygamma", ("torch.polygamma", "torch.special.polygamma"), "polygamma.out",
        ("polygamma",),
    ),
    _fallback("ASF106", "mode", ("torch.mode",), "mode"),
    Replacement(
        "ASF107", "histogram", ("torch.histogram",), Kind.FALLBACK,
        ("histogram.bin_ct", "histogram.bins_tensor"),
    ),
    _fallback("ASF108", "poisson", ("torch.poisson",), "poisson"),
    _fallback(
        "ASF109", "fractional_max_pool2d", ("torch.nn.functional.fractional_max_pool2d",),
        "fractional_max_pool2d.output", ("fractional_max_pool2d",),
    ),
    _fallback(
        "ASF110", "Gamma", (f"{_DISTRIBUTIONS}.Gamma", f"{_DISTRIBUTIONS}.gamma.Gamma"),
        "_standard_gamma",
    ),
    _fallback(
        "ASF111", "Dirichlet",
        (f"{_DISTRIBUTIONS}.Dirichlet", f"{_DISTRIBUTIONS}.dirichlet.Dirichlet"),
        "_sample_dirichlet",
    ),
    _fallback(
        "ASF112", "Beta", (f"{_DISTRIBUTIONS}.Beta", f"{_DISTRIBUTIONS}.beta.Beta"),
        "_sample_dirichlet",
    ),
    _fallback(
        "ASF113", "Poisson", (f"{_DISTRIBUTIONS}.Poisson", f"{_DISTRIBUTIONS}.poisson.Poisson"),
        "poisson",
    ),
    _fallback(
        "ASF114", "Binomial",
        (f"{_DISTRIBUTIONS}.Binomial", f"{_DISTRIBUTIONS}.binomial.Binomial"),
        "binomial",
    ),
)  # fmt: skip

BY_API: dict[str, Replacement] = {api: entry for entry in CATALOGUE for api in entry.apis}


def replacement_for(api: str | None, facts: TorchNpuFacts) -> Replacement | None:
    """The catalogue entry for a qualified API name, if that torch_npu release cannot run the API."""
    entry = BY_API.get(api or "")
    return entry if entry is not None and entry.unsupported(facts) else None
