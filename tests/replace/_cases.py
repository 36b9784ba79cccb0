"""Generated inputs for every catalogue function: each pairs the original call with the replacement's.

A case is a call on fresh copies of its tensors (so that gradients can be taken). Inputs cover empty
and batched (broadcast) shapes, float32 and float64, and edge values: NaN, infinities, duplicates,
singular and non-positive-definite matrices (where the original raises, the replacement must too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.nn.functional as F

from ascendify.replace import library as L

D = torch.distributions
Call = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    label: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    backward: bool = True  # differentiate the float outputs w.r.t. the float tensor inputs
    seeded: bool = False  # draws random numbers: seed before each of the two calls
    # What is compared of an output whose form depends on rounding in the original (LAPACK's LU of
    # an exactly singular matrix ends on a zero pivot with one CPU kernel, a 1e-8 one with another).
    compared: Call | None = None


@dataclass(frozen=True)
class Cases:
    original: Call
    replacement: Call
    cases: list[Case]


def _generator() -> torch.Generator:
    return torch.Generator().manual_seed(1234)


def _randn(g: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=dtype)


def _well_conditioned(
    g: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    size = shape[-1]
    return _randn(g, *shape, dtype=dtype) + size * torch.eye(size, dtype=dtype)


def _spd(g: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    a = _randn(g, *shape, dtype=dtype)
    return a @ a.mT + shape[-1] * torch.eye(shape[-1], dtype=dtype)


def _square_cases(make: Callable[..., torch.Tensor]) -> Iterator[Case]:
    g = _generator()
    yield Case("3x3", (make(g, 3, 3),))
    yield Case("1x1", (make(g, 1, 1),))
    yield Case("batch", (make(g, 2, 4, 4),))
    yield Case("nested batch", (make(g, 2, 1, 3, 3),))
    yield Case("float64", (make(g, 5, 5, dtype=torch.float64),))
    yield Case("empty matrix", (torch.zeros(0, 0),), backward=False)
    yield Case("empty batch", (torch.zeros(3, 0, 0),), backward=False)
    yield Case("8x8", (make(g, 8, 8),))


SINGULAR = {"duplicate rows", "zero matrix"}


def _determinant(result: Any) -> torch.Tensor:
    """The determinant a (sign, logabsdet) pair stands for: 0 for a singular matrix, whatever
    sign and tiny pivot the original's rounding gave."""
    sign, logabsdet = result
    return sign * torch.exp(logabsdet)


def _linalg_general(*, non_finite: bool = True) -> list[Case]:
    """Invertible matrices, then singular ones (and, unless told not to, NaN and inf)."""
    g = _generator()
    row = _randn(g, 1, 4)
    special = [
        Case("duplicate rows", (torch.cat([row, row, _randn(g, 2, 4)]),), backward=False),
        Case("zero matrix", (torch.zeros(3, 3),), backward=False),
    ]
    if non_finite:
        nan, inf = float("nan"), float("inf")
        special.append(
            Case("non-finite", (torch.tensor([[1.0, inf], [nan, 2.0]]),), backward=False)
        )
    return [
        *_square_cases(_well_conditioned),
        Case(
            "unpivoted order", (torch.tensor([[0.0, 2.0, 1.0], [3.0, 1.0, 0.0], [1.0, 1.0, 4.0]]),)
        ),
        Case(
            "negative determinant",
            (torch.tensor([[0.0, 1.0], [1.0, 0.0]]) + 0.1 * _randn(g, 2, 2),),
        ),
        *special,
    ]


def _cholesky() -> list[Case]:
    g = _generator()
    return [
        *_square_cases(_spd),
        Case("upper", (_spd(g, 4, 4),), {"upper": True}),
        Case(
            "not symmetric: lower triangle read",
            (torch.tril(_spd(g, 3, 3)) + torch.triu(_randn(g, 3, 3), 1),),
        ),
        Case("not positive-definite", (-_spd(g, 3, 3),), backward=False),
        Case("singular", (torch.ones(3, 3),), backward=False),
    ]


def _solve() -> list[Case]:
    g = _generator()
    return [
        Case("matrix rhs", (_well_conditioned(g, 4, 4), _randn(g, 4, 2))),
        Case("vector rhs", (_well_conditioned(g, 3, 3), _randn(g, 3))),
        Case("batch of vectors", (_well_conditioned(g, 2, 3, 3), _randn(g, 2, 3))),
        Case("broadcast A", (_well_conditioned(g, 3, 3), _randn(g, 5, 3, 2))),
        Case("broadcast B", (_well_conditioned(g, 2, 3, 3), _randn(g, 3, 4))),
        Case("left=False", (_well_conditioned(g, 3, 3), _randn(g, 2, 3)), {"left": False}),
        Case(
            "float64",
            (_well_conditioned(g, 4, 4, dtype=torch.float64), _randn(g, 4, 1, dtype=torch.float64)),
        ),
        Case("empty", (torch.zeros(0, 0), torch.zeros(0, 2)), backward=False),
        Case("singular", (torch.zeros(2, 2), torch.ones(2)), backward=False),
    ]


def _mvn(cls: Any, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, ...]:
    """What a training script reads from the distribution: log_prob, entropy, a seeded sample."""
    value = kwargs.pop("value")
    distribution = cls(*args, **kwargs)
    torch.manual_seed(7)
    return (
        distribution.log_prob(value),
        distribution.entropy(),
        distribution.rsample((2,)),
        distribution.covariance_matrix,
    )


def _mvn_cases() -> list[Case]:
    g = _generator()
    return [
        Case(
            "covariance",
            (torch.zeros(3),),
            {"covariance_matrix": _spd(g, 3, 3), "value": _randn(g, 3)},
        ),
        Case(
            "precision", (_randn(g, 4),), {"precision_matrix": _spd(g, 4, 4), "value": _randn(g, 4)}
        ),
        Case(
            "scale_tril",
            (_randn(g, 2),),
            {"scale_tril": torch.tril(_spd(g, 2, 2)), "value": _randn(g, 2)},
        ),
        Case(
            "batched loc broadcast",
            (_randn(g, 5, 3),),
            {"covariance_matrix": _spd(g, 3, 3), "value": _randn(g, 5, 3)},
        ),
        Case(
            "float64 batch",
            (torch.zeros(2, 3, dtype=torch.float64),),
            {
                "covariance_matrix": _spd(g, 2, 3, 3, dtype=torch.float64),
                "value": _randn(g, 3, dtype=torch.float64),
            },
        ),
    ]


def _logcumsumexp() -> list[Case]:
    g = _generator()
    inf, nan = float("inf"), float("nan")
    return [
        Case("rows", (_randn(g, 3, 7), 1)),
        Case("columns", (_randn(g, 3, 7), 0)),
        Case("negative dim", (_randn(g, 2, 3, 9), -1)),
        Case("long", (_randn(g, 100) * 30, 0)),
        Case("scalar", (torch.tensor(1.5), 0)),
        Case("empty", (torch.zeros(0), 0), backward=False),
        Case("empty rows", (torch.zeros(2, 0, 3), 1), backward=False),
        Case("float64", (_randn(g, 4, 17, dtype=torch.float64), 1)),
        Case("duplicates", (torch.tensor([2.0, 2.0, 2.0, -1.0, 2.0]), 0)),
        Case("-inf", (torch.tensor([-inf, -inf, 0.0, -inf, 3.0]), 0), backward=False),
        Case("inf and nan", (torch.tensor([1.0, inf, 2.0, nan, -inf, 0.5]), 0), backward=False),
    ]


def _special(n: int | None = None) -> list[Case]:
    g = _generator()
    lead = () if n is None else (n,)
    edges = torch.tensor(
        [0.0, -1.0, -2.5, 1e-8, 1.0, 2.0, 50.0, float("inf"), -float("inf"), float("nan")]
    )
    return [
        Case("positive", (*lead, torch.rand(4, 5, generator=g) * 10 + 0.1)),
        Case("negative", (*lead, -torch.rand(7, generator=g) * 5 - 0.05)),
        Case("float64", (*lead, torch.rand(6, generator=g, dtype=torch.float64) * 4 + 0.2)),
        Case("edges", (*lead, edges), backward=False),
        Case("empty", (*lead, torch.zeros(0, 3)), backward=False),
        Case("scalar", (*lead, torch.tensor(3.5))),
        Case("integers", (*lead, torch.arange(-3, 6)), backward=False),
    ]


def _mode() -> list[Case]:
    g = _generator()
    return [
        Case("ints with ties", (torch.randint(0, 4, (5, 9), generator=g), 1), backward=False),
        Case("floats, dim 0", (torch.randint(0, 3, (6, 2), generator=g).float(), 0)),
        Case("keepdim", (torch.randint(0, 3, (2, 3, 5), generator=g), -1, True), backward=False),
        Case("nan", (torch.tensor([[1.0, float("nan"), float("nan"), 2.0]]), 1), backward=False),
        Case("bool", (torch.tensor([True, False, True]), 0), backward=False),
        Case("scalar", (torch.tensor(4.0),), backward=False),
    ]


def _histogram() -> list[Case]:
    g = _generator()
    x = torch.rand(50, generator=g) * 4 - 1
    return [
        Case("bins", (x, 7), backward=False),
        Case("range", (x,), {"bins": 5, "range": (0.0, 2.0)}, backward=False),
        Case("edges", (x, torch.tensor([-1.0, 0.0, 0.5, 3.0])), backward=False),
        Case(
            "weights, density",
            (x, 4),
            {"weight": torch.rand(50, generator=g), "density": True},
            backward=False,
        ),
        Case(
            "float64 duplicates",
            (torch.tensor([1.0, 1.0, 1.0, 2.0], dtype=torch.float64), 3),
            backward=False,
        ),
        Case("empty", (torch.zeros(0), 3), backward=False),
    ]


def _eigh() -> list[Case]:
    g = _generator()
    return [
        *_square_cases(_spd),
        Case("upper triangle", (_spd(g, 3, 3),), {"UPLO": "U"}),
        Case("repeated eigenvalues", (torch.eye(3) * 2,), backward=False),
    ]


def _poisson() -> list[Case]:
    g = _generator()
    return [
        Case("rates", (torch.rand(4, 6, generator=g) * 20,), backward=False, seeded=True),
        Case("zeros", (torch.zeros(5),), backward=False, seeded=True),
        Case(
            "float64",
            (torch.rand(3, generator=g, dtype=torch.float64) * 3,),
            backward=False,
            seeded=True,
        ),
        Case("empty", (torch.zeros(0, 2),), backward=False, seeded=True),
    ]


def _fractional() -> list[Case]:
    g = _generator()
    return [
        Case("output_size", (_randn(g, 2, 3, 9, 9), 3), {"output_size": 4}, seeded=True),
        Case("output_ratio", (_randn(g, 1, 2, 8, 8), 2), {"output_ratio": (0.5, 0.5)}, seeded=True),
        Case(
            "indices",
            (_randn(g, 3, 7, 7), 2),
            {"output_size": 3, "return_indices": True},
            seeded=True,
        ),
        Case(
            "duplicates",
            (torch.ones(1, 1, 6, 6), 2),
            {"output_size": 3},
            seeded=True,
            backward=False,
        ),
        Case(
            "float64",
            (_randn(g, 1, 1, 5, 5, dtype=torch.float64), 2),
            {"output_size": 2},
            seeded=True,
        ),
    ]


def _sampling(cls: Any, method: str) -> Call:
    def draw(*args: Any, **kwargs: Any) -> torch.Tensor:
        shape = kwargs.pop("shape", ())
        distribution = cls(*args, **kwargs)
        return getattr(distribution, method)(shape)  # type: ignore[no-any-return]

    return draw


def _positive_parameters(count: int) -> list[Case]:
    g = _generator()

    def positive(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.rand(*shape, generator=g, dtype=dtype) * 3 + 0.2

    return [
        Case("vector", tuple(positive(4) for _ in range(count)), seeded=True),
        Case(
            "sample shape", tuple(positive(3) for _ in range(count)), {"shape": (5, 2)}, seeded=True
        ),
        Case("broadcast", (positive(2, 3), *(positive(3) for _ in range(count - 1))), seeded=True),
        Case("float64", tuple(positive(3, dtype=torch.float64) for _ in range(count)), seeded=True),
        Case(
            "small concentration", tuple(torch.full((6,), 0.05) for _ in range(count)), seeded=True
        ),
    ]


def _counts() -> list[Case]:
    g = _generator()
    return [
        Case(
            "rates", (torch.rand(5, generator=g) * 9,), {"shape": (3,)}, backward=False, seeded=True
        ),
        Case("zero rate", (torch.zeros(3),), backward=False, seeded=True),
        Case(
            "float64",
            (torch.rand(2, 2, generator=g, dtype=torch.float64),),
            backward=False,
            seeded=True,
        ),
    ]


def _binomial() -> list[Case]:
    g = _generator()
    return [
        Case("probs", (10,), {"probs": torch.rand(4, generator=g)}, backward=False, seeded=True),
        Case(
            "logits",
            (torch.tensor([3.0, 7.0]),),
            {"logits": _randn(g, 2)},
            backward=False,
            seeded=True,
        ),
        Case(
            "broadcast counts",
            (torch.tensor([[1.0], [20.0]]),),
            {"probs": torch.rand(3, generator=g)},
            backward=False,
            seeded=True,
        ),
        Case(
            "edge probabilities",
            (5,),
            {"probs": torch.tensor([0.0, 1.0, 0.5])},
            backward=False,
            seeded=True,
        ),
    ]


CASES: dict[str, Cases] = {
    "linalg_cholesky": Cases(torch.linalg.cholesky, L.linalg_cholesky, _cholesky()),
    # LAPACK's inverse of a matrix holding NaN/inf has no defined NaN pattern to match.
    "linalg_inv": Cases(torch.linalg.inv, L.linalg_inv, _linalg_general(non_finite=False)),
    "linalg_det": Cases(torch.linalg.det, L.linalg_det, _linalg_general()),
    "linalg_slogdet": Cases(
        torch.linalg.slogdet,
        L.linalg_slogdet,
        [
            replace(case, compared=_determinant) if case.label in SINGULAR else case
            for case in _linalg_general()
        ],
    ),
    "linalg_solve": Cases(torch.linalg.solve, L.linalg_solve, _solve()),
    "MultivariateNormal": Cases(
        lambda *a, **k: _mvn(D.MultivariateNormal, *a, **k),
        lambda *a, **k: _mvn(L.MultivariateNormal, *a, **k),
        _mvn_cases(),
    ),
    "logcumsumexp": Cases(torch.logcumsumexp, L.logcumsumexp, _logcumsumexp()),
    "linalg_eigh": Cases(torch.linalg.eigh, L.linalg_eigh, _eigh()),
    "linalg_eigvalsh": Cases(torch.linalg.eigvalsh, L.linalg_eigvalsh, _eigh()),
    "lgamma": Cases(torch.lgamma, L.lgamma, _special()),
    "digamma": Cases(torch.digamma, L.digamma, _special()),
    "polygamma": Cases(torch.polygamma, L.polygamma, _special(1)),
    "mode": Cases(torch.mode, L.mode, _mode()),
    "histogram": Cases(torch.histogram, L.histogram, _histogram()),
    "poisson": Cases(torch.poisson, L.poisson, _poisson()),
    "fractional_max_pool2d": Cases(F.fractional_max_pool2d, L.fractional_max_pool2d, _fractional()),
    "Gamma": Cases(
        _sampling(D.Gamma, "rsample"), _sampling(L.Gamma, "rsample"), _positive_parameters(2)
    ),
    "Dirichlet": Cases(
        _sampling(D.Dirichlet, "rsample"),
        _sampling(L.Dirichlet, "rsample"),
        _positive_parameters(1),
    ),
    "Beta": Cases(
        _sampling(D.Beta, "rsample"), _sampling(L.Beta, "rsample"), _positive_parameters(2)
    ),
    "Poisson": Cases(_sampling(D.Poisson, "sample"), _sampling(L.Poisson, "sample"), _counts()),
    "Binomial": Cases(
        _sampling(D.Binomial, "sample"), _sampling(L.Binomial, "sample"), _binomial()
    ),
}
