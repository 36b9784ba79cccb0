"""Step splits, per-rank problems and verdicts on kineto-shaped traces whose split is planned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendify.cli import main
from ascendify.perf import analyse, to_json
from ascendify.perf.intervals import Timeline, split_step
from tests.perf.synthetic import PlannedStep, write_kineto

HEALTHY = PlannedStep(idle=200, computing=2000, communication=3000, overlap=100)


def test_split_of_overlapping_intervals_adds_up_exactly() -> None:
    computing, communication = Timeline(), Timeline()
    for start, end in ((10, 30), (25, 40), (60, 70)):  # out of order and overlapping
        computing.add(start, end)
    computing.add(5, 8)
    communication.add(35, 65)
    split = split_step(computing.merged(), communication.merged(), 0, 100)
    assert split.computing == 3 + 30 + 10
    assert split.overlapped == 5 + 5
    assert split.communication_not_overlapped == 20
    assert split.preparing == 5
    assert split.free == 100 - 5 - 43 - 20


def test_planned_steps_come_back_in_milliseconds(tmp_path: Path) -> None:
    write_kineto(tmp_path / "rank_0" / "a.json", 0, [HEALTHY] * 3, first_step=5)
    [rank] = to_json(analyse(str(tmp_path)))["ranks"]
    assert [s["step"] for s in rank["steps"]] == [5, 6, 7]
    step = rank["steps"][0]
    assert step["computing_ms"] == pytest.approx(2.0)
    assert step["overlapped_ms"] == pytest.approx(0.1)
    assert step["communication_not_overlapped_ms"] == pytest.approx(2.9)
    assert step["preparing_ms"] == pytest.approx(0.2)
    assert step["free_ms"] == pytest.approx(0.0, abs=1e-6)
    assert step["step_ms"] == pytest.approx(5.1)


def _job(folder: Path, slow: dict[int, PlannedStep], ranks: int = 3, steps: int = 4) -> None:
    for rank in range(ranks):
        plan = slow.get(rank, HEALTHY)
        write_kineto(folder / f"rank_{rank}" / "trace.json", rank, [plan] * steps)


@pytest.mark.parametrize(
    ("slow_plan", "cause"),
    [
        (PlannedStep(idle=200, computing=4900, communication=100), "compute"),
        (PlannedStep(idle=3100, computing=2000, communication=100), "host"),
    ],
)
def test_the_rank_that_waits_least_is_slow_for_its_cause(
    tmp_path: Path, slow_plan: PlannedStep, cause: str
) -> None:
    _job(tmp_path, {1: slow_plan})
    result = to_json(analyse(str(tmp_path)))
    assert (result["slow_ranks"], result["cause"]) == ([1], cause)
    assert "rank 1" in result["verdict"]


def test_equal_ranks_are_balanced(tmp_path: Path) -> None:
    _job(tmp_path, {})
    result = to_json(analyse(str(tmp_path)))
    assert (result["slow_ranks"], result["cause"]) == ([], None)
    assert result["verdict"].startswith("balanced")


def test_a_one_step_stall_makes_no_straggler(tmp_path: Path) -> None:
    stall = PlannedStep(idle=200, computing=9000, communication=100)
    for rank in range(2):
        plans = [HEALTHY] * 4 if rank == 0 else [stall, HEALTHY, HEALTHY, HEALTHY]
        write_kineto(tmp_path / f"rank_{rank}" / "t.json", rank, plans)
    assert to_json(analyse(str(tmp_path)))["slow_ranks"] == []


def test_bad_ranks_are_named_and_the_others_analysed(tmp_path: Path) -> None:
    log_dir = tmp_path / "run"
    for rank in range(4):
        (log_dir / f"rank_{rank}.log").parent.mkdir(parents=True, exist_ok=True)
        (log_dir / f"rank_{rank}.log").write_text("")
    profile = log_dir / "profile"
    write_kineto(profile / "rank_0" / "t.json", 0, [HEALTHY] * 3)
    cut = write_kineto(profile / "rank_1" / "t.json", 1, [HEALTHY] * 3)
    cut.write_text(cut.read_text()[:-200])
    write_kineto(profile / "rank_2" / "t.json", 2, [])  # 0 steps
    # rank 3 wrote nothing
    result = to_json(analyse(str(log_dir)))
    assert [r["rank"] for r in result["ranks"]] == [0]
    messages = {p["rank"]: p["message"] for p in result["problems"]}
    assert "ends early" in messages[1]
    assert "0 steps" in messages[2]
    assert "no trace" in messages[3]


def test_nothing_usable_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rank_0").mkdir()
    (tmp_path / "rank_0" / "t.json").write_text('{"traceEvents": [')
    assert main(["perf", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "no rank could be analysed" in error
    assert len(error.strip().splitlines()) == 1
    assert main(["perf", str(tmp_path / "missing")]) == 2
    assert main(["perf", str(tmp_path / "rank_0")]) == 2


def test_json_output_has_the_issue_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _job(tmp_path, {}, ranks=2)
    assert main(["perf", str(tmp_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"ranks", "slow_ranks", "cause", "verdict"}
    assert set(result["ranks"][0]["steps"][0]) >= {
        "step", "step_ms", "computing_ms", "communication_not_overlapped_ms", "overlapped_ms",
        "free_ms", "preparing_ms",
    }  # fmt: skip
    assert main(["perf", str(tmp_path)]) == 0
    assert "balanced" in capsys.readouterr().out


def test_a_restarted_rank_is_read_from_its_newest_trace_and_said(tmp_path: Path) -> None:
    import os

    old = write_kineto(tmp_path / "rank_0" / "attempt_0.pt.trace.json", 0, [HEALTHY] * 2)
    new = write_kineto(tmp_path / "rank_0" / "attempt_1.pt.trace.json", 0, [HEALTHY] * 3)
    os.utime(old, (1, 1))
    analysis = analyse(str(tmp_path))
    assert [profile.source for profile in analysis.profiles] == [new]
    assert any(str(new) in note and str(old) in note for note in analysis.notes)


def test_ranks_of_different_formats_are_analysed_together_with_a_note(tmp_path: Path) -> None:
    write_kineto(tmp_path / "rank_0" / "t.json", 0, [HEALTHY] * 2)
    output = tmp_path / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output / "step_trace_time.csv").write_text(
        "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free\n"
        "0,2000,2900,100,3000,200\n1,2000,2900,100,3000,200\n"
    )
    result = to_json(analyse(str(tmp_path)))
    assert [(r["rank"], r["format"]) for r in result["ranks"]] == [(0, "kineto"), (1, "ascend")]
    assert any(note.startswith("mixed formats") for note in result["notes"])
    assert result["slow_ranks"] == []
