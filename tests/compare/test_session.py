"""The tolerance two runs are judged with when one ran under autocast (pure, fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendify.compare.records import Dump
from ascendify.compare.session import autocast_tolerance


def _dump(autocast: str | None) -> Dump:
    return Dump(Path("d"), {"ranks": {"0": {"autocast": autocast}}}, ())


@pytest.mark.parametrize(
    ("tolerance", "b_autocast", "chosen", "note"),
    [
        ("auto", "bfloat16", "bf16", "B ran under bfloat16 autocast: judged with bf16's budget"),
        ("auto", "float16", "fp16", "judged with fp16's budget"),
        ("strict", "bfloat16", "strict", "--tolerance bf16 allows for its rounding"),
        ("msprobe", "bfloat16", "msprobe", None),
        ("auto", None, "auto", None),
    ],
)
def test_a_run_under_autocast_is_judged_with_its_formats_budget_unless_strict(
    tolerance: str, b_autocast: str | None, chosen: str, note: str | None
) -> None:
    used, notes = autocast_tolerance(_dump(None), _dump(b_autocast), tolerance)
    assert used == chosen
    assert [n for n in notes if note and note in n] == list(notes)
    assert bool(notes) is (note is not None)


def test_the_looser_format_wins_when_both_runs_used_autocast() -> None:
    used, _ = autocast_tolerance(_dump("float16"), _dump("bfloat16"), "auto")
    assert used == "bf16"
