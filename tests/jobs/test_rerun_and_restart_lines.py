"""A rerun's hyperparameters (--hyper, --unset-hyper) and the line a restart is told as."""

from __future__ import annotations

import pytest

from ascendify.errors import AscendifyError
from ascendify.jobs.runner import restart_line
from ascendify.jobs.service import rerun_hyper

OLD = {"lr": "0.1", "epochs": "3", "seed": "7"}


@pytest.mark.parametrize(
    ("changed", "unset", "expected"),
    [
        ({}, (), OLD),
        ({"lr": "0.2"}, (), {"lr": "0.2", "epochs": "3", "seed": "7"}),
        ({}, ("seed",), {"lr": "0.1", "epochs": "3"}),
        ({"batch": "8"}, ("seed", "lr"), {"epochs": "3", "batch": "8"}),
    ],
)
def test_a_rerun_sets_and_unsets_hyperparameters(
    changed: dict[str, str], unset: tuple[str, ...], expected: dict[str, str]
) -> None:
    assert rerun_hyper("abc", OLD, changed, unset) == expected


@pytest.mark.parametrize(
    ("changed", "unset", "error"),
    [
        ({}, ("warmup",), "job abc has no hyperparameter warmup (it has: epochs, lr, seed)"),
        ({"lr": "1"}, ("lr",), "--unset-hyper lr and --hyper lr=...: choose one"),
    ],
)
def test_a_rerun_refuses_what_it_cannot_unset(
    changed: dict[str, str], unset: tuple[str, ...], error: str
) -> None:
    with pytest.raises(AscendifyError) as refused:
        rerun_hyper("abc", OLD, changed, unset)
    assert str(refused.value) == error


def test_a_restart_line_names_the_rank_its_exit_code_and_describe() -> None:
    attempt = {"attempt": 0, "cause": "rank failed", "reason": "rank 1 raised ValueError",
               "exit_codes": {"0": 0, "1": 3, "2": None}}  # fmt: skip
    assert restart_line(attempt, 2, "abc123") == (
        "attempt 0 ended (rank failed): rank 1 exited with 3, rank 1 raised ValueError; "
        "restart 1 of 2; see `ascendify job describe abc123`"
    )
    stopped_first = {**attempt, "exit_codes": {"0": -15, "1": 3}}  # rank 0 stopped because of 1
    assert "(rank failed): rank 1 exited with 3, rank 1" in restart_line(stopped_first, 2, "abc")
    named = {**attempt, "exit_codes": {"0": 1, "1": 1}, "rank": 1}  # the launcher's first failure
    assert "(rank failed): rank 1 exited with 1, rank 1" in restart_line(named, 2, "abc")
    hung = {**attempt, "cause": "hang", "reason": "no output", "exit_codes": {"0": -9}}
    assert "rank 0 killed by signal 9, no output" in restart_line(hung, 1, "abc123")
