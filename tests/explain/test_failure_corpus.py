"""explain on real failures from public threads (tests/explain/corpus/README.md).

The development split, case by case: each names the thread's root rank, cause and fix. A case the
catalogue cannot answer yet is named in corpus/known_misses.json with why, and is a strict xfail, so
it fails the day it starts passing. The held-out split is held to its rates, never case by case: it was
not read while the catalogue grew.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .corpus_score import cases, judge, rates

DEV = cases("dev")
HELD_OUT = cases("test")


KNOWN_MISSES: dict[str, str] = json.loads(
    (Path(__file__).parent / "corpus" / "known_misses.json").read_text(encoding="utf-8")
)


def _known_miss(case_dir: Path) -> str | None:
    return KNOWN_MISSES.get(case_dir.name)


@pytest.mark.parametrize(
    "case_dir",
    [
        pytest.param(
            c, marks=pytest.mark.xfail(strict=True, reason=m) if (m := _known_miss(c)) else ()
        )
        for c in DEV
    ],
    ids=[c.name for c in DEV],
)
def test_a_development_case_gets_its_root_rank_cause_and_fix(case_dir: Path) -> None:
    judgement = judge(case_dir)
    assert not judgement.waiting_blamed, judgement.said
    assert judgement.root_ok, judgement.said
    assert judgement.cause_ok, judgement.said
    assert judgement.fix_ok, judgement.said


def test_the_corpus_is_large_enough_and_split_by_thread() -> None:
    index = json.loads((Path(__file__).parent / "corpus" / "index.json").read_text())["cases"]
    assert len(index) >= 150
    assert len(HELD_OUT) >= 50
    dev_threads = {e["thread"] for e in index if e["split"] == "dev"}
    test_threads = {e["thread"] for e in index if e["split"] == "test"}
    assert not dev_threads & test_threads


# What the held-out split gave when last read (101 cases, 46 of them Ascend; 2026-12-05, after the
# catalogue grew from the development split and 13 cases joined the split): right 77.2 %, Ascend
# 73.9 %, a useful fix 58.4 %, no waiting rank blamed. Issue 44 asks for 85 %, 80 % and 80 %: not
# met yet. These floors keep what was reached; raise them only from a held-out reading, never by
# tuning on the held-out cases.
HELD_OUT_FLOORS = {"right": 0.77, "ascend": 0.73, "fix": 0.58}


def test_the_held_out_split_keeps_its_rates() -> None:
    figures = rates([judge(c) for c in HELD_OUT])
    assert figures["all"]["waiting_blamed"] == 0
    assert figures["all"]["right"] >= HELD_OUT_FLOORS["right"], figures
    assert figures["ascend"]["right"] >= HELD_OUT_FLOORS["ascend"], figures
    assert figures["all"]["fix"] >= HELD_OUT_FLOORS["fix"], figures
