"""How far apart two recordings of a tensor are, and the budgets they are held to (pure, fast)."""

from __future__ import annotations

import math

import numpy
import pytest

from ascendify.compare.metrics import (
    BF16,
    FP16,
    FP32,
    STRICT,
    PairMetrics,
    budget,
    sample_metrics,
    stat_metrics,
    within,
)
from ascendify.compare.records import TensorStats


def _stats(values: list[float], dtype: str = "float32") -> TensorStats:
    finite = [v for v in values if math.isfinite(v)]
    return TensorStats(
        dtype, (len(values),), min(values), max(values), sum(values) / len(values),
        math.sqrt(sum(v * v for v in finite)) if len(finite) == len(values) else math.nan,
        sum(math.isnan(v) for v in values), sum(math.isinf(v) for v in values),
    )  # fmt: skip


def test_equal_statistics_have_no_error() -> None:
    a = _stats([1.0, -2.0, 3.0])
    metrics = stat_metrics(a, a)
    assert metrics.stat_error == metrics.max_abs == 0
    assert within(metrics, "strict", STRICT)


def test_a_mean_near_zero_is_measured_against_the_tensors_scale() -> None:
    # a normalized output: mean 1e-8 against 3e-8; relative to the mean that is 200%, to the RMS nothing
    a, b = _stats([1.0, -1.0 + 2e-8]), _stats([1.0, -1.0 + 6e-8])
    assert stat_metrics(a, b).stat_error < 1e-7


def test_a_scaled_tensor_keeps_its_cosine_but_fails_on_its_error() -> None:
    x = numpy.array([1.0, -2.0, 3.0], dtype=numpy.float32)
    base = stat_metrics(_stats(list(map(float, x))), _stats(list(map(float, 1.1 * x))))
    metrics = sample_metrics(base, x, 1.1 * x)
    assert metrics.cosine == pytest.approx(1.0)
    assert metrics.relative == pytest.approx(0.1 / 1.1 * 3 / 3, rel=1e-3)
    assert not within(metrics, "auto", FP32)


def test_nan_or_inf_counts_that_differ_fail_every_budget() -> None:
    metrics = stat_metrics(_stats([1.0, math.nan]), _stats([1.0, 2.0]))
    assert metrics.nonfinite_differs
    assert not within(metrics, "bf16", BF16)
    assert not within(metrics, "msprobe", BF16)


def test_nan_in_both_runs_at_the_same_places_is_agreement() -> None:
    a = _stats([1.0, math.nan])
    assert within(stat_metrics(a, a), "strict", STRICT)


def test_shapes_that_differ_fail() -> None:
    assert stat_metrics(_stats([1.0]), _stats([1.0, 1.0])).shape_differs


@pytest.mark.parametrize(
    ("tolerance", "dtypes", "expected"),
    [
        ("auto", ("float32", "float32"), FP32),
        ("auto", ("float32", "bfloat16"), BF16),  # a bf16 run against fp32: bf16's budget
        ("auto", ("float16", "float32"), FP16),
        ("strict", ("float32", "bfloat16"), STRICT),  # strict allows no format
        ("fp16", ("float32", "float32"), FP16),
        ("fp16", ("bfloat16", "float32"), BF16),
        ("bf16", ("float32", "float32"), BF16),
    ],
)
def test_budgets_follow_the_tolerance_and_the_lower_precision_dtype(
    tolerance: str, dtypes: tuple[str, str], expected: object
) -> None:
    assert budget(tolerance, *dtypes) == expected


@pytest.mark.parametrize(
    ("cosine", "max_abs", "passes"),
    [
        (0.995, 0.5, True),
        (0.98, 0.0005, True),
        (0.98, 0.002, False),
        (0.85, 0.0001, False),
        (1.0, 1.5, False),
    ],
)
def test_msprobe_verdict_on_sampled_tensors(cosine: float, max_abs: float, passes: bool) -> None:
    metrics = PairMetrics(0.0, max_abs, cosine=cosine, relative=0.0)
    assert within(metrics, "msprobe", FP32) is passes


def test_msprobe_on_statistics_flags_a_relative_difference_above_one_half() -> None:
    assert within(PairMetrics(0.4, 0.4), "msprobe", FP32)
    assert not within(PairMetrics(0.6, 0.6), "msprobe", FP32)


def test_nan_samples_the_statistics_missed_still_differ() -> None:
    # equal, finite statistics on both sides; only A's samples hold NaN: not a cosine of 1
    stats = _stats([1.0, 2.0, 3.0])
    base = stat_metrics(stats, stats)
    a = numpy.array([math.nan, math.nan, math.nan], dtype=numpy.float32)
    b = numpy.array([1.0, 2.0, 3.0], dtype=numpy.float32)
    metrics = sample_metrics(base, a, b)
    assert metrics.nonfinite_differs
    assert not within(metrics, "bf16", BF16)
    inf_signs = sample_metrics(base, numpy.array([numpy.inf]), numpy.array([-numpy.inf]))
    assert inf_signs.nonfinite_differs
    same = sample_metrics(base, numpy.array([math.nan, 1.0]), numpy.array([math.nan, 1.0]))
    assert not same.nonfinite_differs
