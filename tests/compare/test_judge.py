"""Where two dumps part: alignment, diverged against inherited, the first divergence (pure, fast)."""

from __future__ import annotations

import pytest

from ascendify.compare.judge import DIVERGED, INHERITED, OK, ONLY_B, judge
from ascendify.errors import AscendifyError
from tests.compare.synthetic import CLEAN, changed, record, run


def _statuses(a: list, b: list, tolerance: str = "auto") -> dict[str, str]:  # type: ignore[type-arg]
    return {v.record.path: v.status for v in judge(a, b, tolerance).verdicts}


def test_identical_runs_agree_everywhere() -> None:
    comparison = judge(run(CLEAN), run(CLEAN), "strict")
    assert not comparison.failed
    assert comparison.first is None
    assert comparison.count(OK) == len(run(CLEAN))


def test_a_module_whose_inputs_agree_and_output_does_not_is_where_it_diverged() -> None:
    perturbed = changed(n=4.4, m=5.5, b1=6.6, out=7.7, loss=0.6)
    comparison = judge(run(CLEAN), run(perturbed), "auto")
    assert comparison.first is not None
    assert comparison.first.record.path == "blocks.1.norm"
    statuses = _statuses(run(CLEAN), run(perturbed))
    assert statuses["blocks.1.norm"] == DIVERGED
    # after it (its inputs differ), around it (its caller), and the loss: inherited
    for path in ("blocks.1.mlp", "blocks.1", "blocks.2", "Model", "loss"):
        assert statuses[path] == INHERITED, path
    assert statuses["embed"] == statuses["blocks.0"] == OK


def test_a_caller_diverges_itself_when_its_own_code_between_modules_does() -> None:
    # blocks.1's norm and mlp agree, but what blocks.1 returns does not (a change in its forward)
    perturbed = changed(b1=6.6, out=7.7, loss=0.6)
    comparison = judge(run(CLEAN), run(perturbed), "auto")
    assert comparison.first is not None
    assert comparison.first.record.path == "blocks.1"
    assert _statuses(run(CLEAN), run(perturbed))["blocks.2"] == INHERITED


def test_a_loss_computed_outside_modules_diverges_by_itself() -> None:
    comparison = judge(run(CLEAN), run(changed(loss=0.6)), "auto")
    assert comparison.first is not None
    assert (comparison.first.record.path, comparison.first.status) == ("loss", DIVERGED)


def test_a_later_step_only_inherits_the_first_steps_divergence() -> None:
    perturbed = changed(n=4.4, m=5.5, b1=6.6, out=7.7)
    a = run(CLEAN) + run(changed(e=2.0), step=1)
    b = run(perturbed) + run(
        changed(e=2.2, b0=3.3), step=1
    )  # updated weights: differs from embed on
    comparison = judge(a, b, "auto")
    assert comparison.first is not None
    assert (comparison.first.record.step, comparison.first.record.path) == (0, "blocks.1.norm")
    assert [
        v.status for v in comparison.verdicts if v.record.step == 1 and v.record.path == "embed"
    ] == [INHERITED]


def test_inputs_that_differ_already_are_named_as_the_earliest_failure() -> None:
    comparison = judge(run(CLEAN), run(changed(x=1.1, e=2.2)), "auto")
    assert comparison.first is not None
    assert comparison.first.status == INHERITED  # no module started it: the data differ


def test_a_call_only_one_side_made_is_reported_not_judged() -> None:
    extra = record("blocks.1.norm", 16, 17, (3.0,), 9.0, call=1)
    comparison = judge(run(CLEAN), [*run(CLEAN), extra], "auto")
    assert not comparison.failed
    assert [v.status for v in comparison.verdicts if v.b is extra] == [ONLY_B]


def test_each_rank_is_aligned_with_its_own_rank() -> None:
    a = run(CLEAN, rank=0) + run(CLEAN, rank=1)
    b = run(CLEAN, rank=0) + run(changed(n=4.4, m=5.5, b1=6.6, out=7.7, loss=0.6), rank=1)
    comparison = judge(a, b, "auto")
    assert comparison.first is not None
    assert (comparison.first.record.rank, comparison.first.record.path) == (1, "blocks.1.norm")


def test_dumps_of_different_programs_are_refused() -> None:
    other = [record(f"conv{i}", 2 * i, 2 * i + 1, (1.0,), 2.0) for i in range(8)]
    with pytest.raises(AscendifyError, match="different programs"):
        judge(run(CLEAN), other, "auto")


def test_dumps_of_different_rank_counts_are_refused() -> None:
    with pytest.raises(AscendifyError, match="ranks"):
        judge(run(CLEAN), run(CLEAN) + run(CLEAN, rank=1), "auto")
