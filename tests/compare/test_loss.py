"""``ascendify compare loss``: two loss curves aligned by step and judged by the 2 % rule (fast)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ascendify.cli import main
from ascendify.compare.loss import judge_losses, read_curve, relative_error
from ascendify.compare.records import MANIFEST, rank_file, record_line
from ascendify.errors import AscendifyError
from tests.compare.synthetic import record

LOSSES = [2.5 - 0.1 * step for step in range(20)]


def _log(path: Path, losses: list[float], offset: int = 0) -> Path:
    """A training log as PyTorch scripts print it, with noise lines between."""
    lines = ["starting training\n"]
    for step, loss in enumerate(losses):
        lines.append(f"step {step + offset} | loss {loss:.6f} | lr 0.1\n")
        lines.append("saving nothing\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _dump(folder: Path, losses: list[float]) -> Path:
    """A compare dump holding only loss records, one a step."""
    folder.mkdir()
    records = [
        record("loss", 0, 1, (), value, step=step, kind="loss") for step, value in enumerate(losses)
    ]
    lines = [json.dumps({"header": {"rank": 0}}) + "\n", *map(record_line, records)]
    (folder / rank_file(0)).write_text("".join(lines), encoding="utf-8")
    (folder / MANIFEST).write_text(json.dumps({"ranks": {"0": {}}}), encoding="utf-8")
    return folder


def test_relative_error_is_measured_against_the_reference() -> None:
    assert relative_error(2.0, 2.02) == pytest.approx(0.01)
    assert relative_error(0.0, 0.0) == 0.0
    assert relative_error(0.0, 1e-9) == math.inf
    assert relative_error(1.0, math.nan) == math.inf
    assert relative_error(math.inf, math.inf) == 0.0


def test_losses_1_percent_apart_pass_and_5_percent_apart_fail_naming_the_first_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = _log(tmp_path / "gpu.log", LOSSES)
    close = _log(tmp_path / "npu_close.log", [v * 1.01 for v in LOSSES])
    # the port agrees for 10 steps, then drifts 5 %
    drifting = _log(
        tmp_path / "npu_far.log", [v * (1.05 if i >= 10 else 1) for i, v in enumerate(LOSSES)]
    )
    assert main(["compare", "loss", str(reference), str(close)]) == 0
    out = capsys.readouterr().out
    assert "mean relative error 1.0000%" in out
    assert "loss curves agree" in out
    assert main(["compare", "loss", str(reference), str(drifting), "--max-rel", "0.03"]) == 1
    out = capsys.readouterr().out
    assert "first step past 3.00%: 10 " in out
    assert "loss curves differ" in out


def test_a_5_percent_gap_fails_by_the_mean_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = _log(tmp_path / "a.log", LOSSES)
    far = _log(tmp_path / "b.log", [v * 1.05 for v in LOSSES])
    assert main(["compare", "loss", str(reference), str(far), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["passed"] is False
    assert found["mean_relative_error"] == pytest.approx(0.05, rel=1e-3)
    assert found["first_step_past"] == 0
    assert found["steps"] == 20


def test_curves_are_aligned_by_their_printed_steps(tmp_path: Path) -> None:
    a = read_curve(_log(tmp_path / "a.log", LOSSES))
    b = read_curve(_log(tmp_path / "b.log", LOSSES[5:], offset=5))  # resumed at step 5
    verdict = judge_losses(a, b)
    assert [e.step for e in verdict.errors] == list(range(5, 20))
    assert verdict.passed
    assert verdict.mean_relative == 0.0


def test_a_replayed_step_keeps_its_last_value(tmp_path: Path) -> None:
    path = tmp_path / "restarted.log"
    path.write_text("step 0 loss 3.0\nstep 1 loss 9.0\nstep 1 loss 2.0\nstep 2 loss 1.0\n")
    curve = read_curve(path)
    assert curve.steps == (0, 1, 2)
    assert curve.values == (3.0, 2.0, 1.0)


def test_a_nan_loss_in_a_dump_fails_and_is_drawn_as_a_cross(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _dump(tmp_path / "a", LOSSES[:4])
    b = _dump(tmp_path / "b", [LOSSES[0], math.nan, *LOSSES[2:4]])
    assert main(["compare", "loss", str(a), str(b), "-o", str(tmp_path / "out")]) == 1
    assert "first step past 2.00%: 1 (2.4 vs nan" in capsys.readouterr().out
    page = (tmp_path / "out" / "loss.html").read_text(encoding="utf-8")
    assert "×<title>step 1: A 2.4, B nan" in page


def test_a_dump_folder_gives_its_loss_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _dump(tmp_path / "a", LOSSES[:4])
    b = _dump(tmp_path / "b", [v * 1.01 for v in LOSSES[:4]])
    assert main(["compare", "loss", str(a), str(b), "-o", str(tmp_path / "out")]) == 0
    assert "compared 4 steps (step 0 to 3)" in capsys.readouterr().out
    page = (tmp_path / "out" / "loss.html").read_text(encoding="utf-8")
    assert "<svg" in page
    assert "step 2: A 2.3, B 2.323" in page  # every point labelled on hover
    assert (tmp_path / "out" / "loss.csv").read_text(encoding="utf-8").startswith("step,loss A")


def test_a_metrics_csv_is_read_by_rank(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text(
        "name,rank,step,value,time\nloss,0,1,2.0,0\nloss,1,1,9.0,0\nlr,0,1,0.1,0\nloss,0,2,1.5,0\n"
    )
    curve = read_curve(path, rank=0)
    assert (curve.steps, curve.values) == ((1, 2), (2.0, 1.5))
    assert read_curve(path, rank=1).values == (9.0,)


def test_bad_input_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    good = _log(tmp_path / "a.log", LOSSES)
    assert main(["compare", "loss", str(good), str(empty)]) == 2
    assert "empty.log: no loss found" in capsys.readouterr().err
    jobs = tmp_path / "no-jobs"
    assert main(["compare", "loss", str(good), "nojob", "--jobs-dir", str(jobs)]) == 2
    assert "nojob: no such file, folder or job" in capsys.readouterr().err
    with pytest.raises(AscendifyError, match="fractions"):
        judge_losses(read_curve(good), read_curve(good), max_mean_rel=-1)
