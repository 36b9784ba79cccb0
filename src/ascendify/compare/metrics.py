"""How far apart two recordings of one tensor are, and how far apart they may be (pure functions).

At the statistics level (every dump) a tensor is known by its min, max, mean, L2 norm and NaN/inf
counts. Their error is measured against the tensor's scale, its root mean square (RMS = norm /
sqrt(elements)), because a relative error of a mean near zero (a LayerNorm's output) says nothing:

    stat error = max(|Δmin|, |Δmax|, |Δmean|) / max(RMS_A, RMS_B)  and  |Δnorm| / max(norm_A, norm_B)

and the largest |Δmin|, |Δmax|, |Δmean| is a lower bound of the maximum absolute error. With
``--level tensors`` the sampled elements give the cosine similarity, the maximum absolute error and
the maximum error relative to the tensor's largest magnitude. A scaled tensor keeps a cosine of 1,
so both measures are judged, never the cosine alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ascendify.compare.records import TensorStats

if TYPE_CHECKING:
    import numpy

TOLERANCES = ("auto", "strict", "msprobe", "bf16", "fp16")


@dataclass(frozen=True)
class Budget:
    name: str
    cosine: float  # at least
    relative: float  # stat error and relative error, at most


# Two runs of one program on one machine are bit for bit equal; strict allows fp32 rounding only.
STRICT = Budget("strict", cosine=0.999999, relative=1e-6)
# fp32 on different hardware or libraries: other reduction orders, fused kernels.
FP32 = Budget("fp32", cosine=0.99999, relative=1e-4)
# A few units in the last place of the format, accumulated over a network's depth.
FP16 = Budget("fp16", cosine=0.999, relative=1e-2)
BF16 = Budget("bf16", cosine=0.99, relative=5e-2)
_BY_DTYPE = {"bfloat16": BF16, "float16": FP16}
_LOOSENESS = {STRICT.name: 0, FP32.name: 1, FP16.name: 2, BF16.name: 3}
# msprobe's verdict ("Accuracy Reached = No"), and its flag for statistics-only dumps.
MSPROBE_COSINE, MSPROBE_COSINE_WITH_ABS, MSPROBE_ABS, MSPROBE_MAX_ABS = 0.9, 0.99, 1e-3, 1.0
MSPROBE_STAT_RELATIVE = 0.5


@dataclass(frozen=True)
class PairMetrics:
    stat_error: float
    max_abs: float  # exact with samples, else a lower bound
    cosine: float | None = None  # with samples only
    relative: float | None = None  # with samples only: max |a - b| / max(max |a|, max |b|)
    nonfinite_differs: bool = False  # NaN or inf counts differ
    shape_differs: bool = False

    @property
    def error(self) -> float:
        """The one figure a table sorts and draws by."""
        return max(self.stat_error, self.relative or 0.0)


def _ratio(difference: float, scale: float) -> float:
    if difference == 0 or (math.isnan(difference) and math.isnan(scale)):
        return 0.0
    return difference / scale if scale > 0 else math.inf


def _delta(a: float, b: float) -> float:
    if math.isnan(a) and math.isnan(b):
        return 0.0  # both NaN: the counts tell whether they agree
    if math.isinf(a) and a == b:
        return 0.0
    return abs(a - b)


_EQUAL = PairMetrics(0.0, 0.0)


def stat_metrics(a: TensorStats, b: TensorStats) -> PairMetrics:
    if (a.min, a.max, a.mean, a.norm, a.nan, a.inf, a.shape) == (
        b.min, b.max, b.mean, b.norm, b.nan, b.inf, b.shape,
    ):  # fmt: skip
        return _EQUAL  # the common case of a clean comparison (NaN never compares equal)
    if a.shape != b.shape:
        return PairMetrics(math.inf, math.inf, shape_differs=True)
    scale = max(a.rms, b.rms)
    deltas = (_delta(a.min, b.min), _delta(a.max, b.max), _delta(a.mean, b.mean))
    stat_error = max(
        *(_ratio(delta, scale) for delta in deltas),
        _ratio(_delta(a.norm, b.norm), max(a.norm, b.norm)),
    )
    return PairMetrics(stat_error, max(deltas), nonfinite_differs=(a.nan, a.inf) != (b.nan, b.inf))


def sample_metrics(base: PairMetrics, a: numpy.ndarray, b: numpy.ndarray) -> PairMetrics:
    """``base`` (the statistics' metrics) completed with what the sampled elements show."""
    import numpy

    if a.shape != b.shape:
        return PairMetrics(base.stat_error, base.max_abs, shape_differs=True)
    # Where the samples hold NaN or inf they must hold it in the same places, whatever the
    # statistics say: a NaN the statistics missed is still a difference, not an equal element.
    nonfinite_differs = base.nonfinite_differs or not (
        numpy.array_equal(numpy.isnan(a), numpy.isnan(b))
        and numpy.array_equal(numpy.isinf(a) & (a > 0), numpy.isinf(b) & (b > 0))
        and numpy.array_equal(numpy.isinf(a) & (a < 0), numpy.isinf(b) & (b < 0))
    )
    finite = numpy.isfinite(a) & numpy.isfinite(b)
    x, y = a[finite].astype(numpy.float64), b[finite].astype(numpy.float64)
    difference = float(numpy.max(numpy.abs(x - y))) if x.size else 0.0
    norms = float(numpy.linalg.norm(x)) * float(numpy.linalg.norm(y))
    if norms > 0:
        cosine = float(numpy.dot(x, y)) / norms
    else:
        cosine = 1.0 if not (x.any() or y.any()) else 0.0
    scale = max(float(numpy.max(numpy.abs(x))), float(numpy.max(numpy.abs(y)))) if x.size else 0.0
    return PairMetrics(
        base.stat_error, max(base.max_abs, difference), min(cosine, 1.0),
        _ratio(difference, scale), nonfinite_differs,
    )  # fmt: skip


def budget(tolerance: str, dtype_a: str, dtype_b: str) -> Budget:
    """The budget a pair of tensors is held to: the tolerance's, or (except under ``strict``) the
    lower precision's of the two dtypes when that one is looser (a bf16 tensor against an fp32 one
    gets bf16's budget)."""
    if tolerance == "strict":
        return STRICT
    chosen = {"bf16": BF16, "fp16": FP16}.get(tolerance, FP32)
    for dtype in (dtype_a, dtype_b):
        by_dtype = _BY_DTYPE.get(dtype, FP32)
        if _LOOSENESS[by_dtype.name] > _LOOSENESS[chosen.name]:
            chosen = by_dtype
    return chosen


def within(metrics: PairMetrics, tolerance: str, allowed: Budget) -> bool:
    if metrics.shape_differs or metrics.nonfinite_differs:
        return False
    if tolerance == "msprobe":
        if metrics.cosine is None:
            return metrics.stat_error <= MSPROBE_STAT_RELATIVE
        return not (
            (metrics.cosine < MSPROBE_COSINE_WITH_ABS and metrics.max_abs > MSPROBE_ABS)
            or metrics.cosine < MSPROBE_COSINE
            or metrics.max_abs > MSPROBE_MAX_ABS
        )
    if metrics.cosine is not None and metrics.cosine < allowed.cosine:
        return False
    return metrics.error <= allowed.relative


def worst(metrics: Sequence[PairMetrics]) -> PairMetrics | None:
    """The pair with the largest error (shape or NaN/inf disagreements first)."""
    if not metrics:
        return None
    return max(
        metrics,
        key=lambda m: (m.shape_differs or m.nonfinite_differs, m.error, -(m.cosine or 1.0)),
    )
