"""The run folder's names: what the launcher plans is what explain and perf read, rank by rank."""

from __future__ import annotations

import os
from pathlib import Path

from ascendify.explain.sources import classify, discover
from ascendify.launch import LaunchOptions, plan_node, resolve_spec
from ascendify.launch.plan import local_assignment
from ascendify.perf.sources import gather
from ascendify.runfolder import SUMMARY_NAME, profile_dir, rank_name, times_path
from tests.perf.synthetic import PlannedStep, write_kineto


def _planned(log_dir: Path) -> list[tuple[int, Path, dict[str, str]]]:
    options = LaunchOptions(
        command=("python", "t.py"), nproc_per_node="3", log_dir=log_dir, job_id="j1"
    )
    spec = resolve_spec(options, {"PATH": os.environ["PATH"]})
    plan = plan_node(spec, local_assignment(spec, master_port=4321))
    return [(worker.rank, worker.log_path, dict(worker.env)) for worker in plan.workers]


def test_explain_reads_each_planned_file_as_its_rank(tmp_path: Path) -> None:
    for rank, log, env in _planned(tmp_path):
        found = classify(log)
        assert found is not None
        assert (found.rank, found.kind) == (rank, "rank")
        plog = Path(env["ASCEND_PROCESS_LOG_PATH"]) / "plog" / "plog-41_20250101.log"
        found = classify(plog)
        assert found is not None
        assert (found.rank, found.kind) == (rank, "plog")
        assert classify(times_path(log)) is None  # the marks beside a log are not a log
        assert classify(Path(env["TORCHELASTIC_ERROR_FILE"])) is None


def test_explain_and_perf_find_the_summary_and_ranks_where_the_launcher_puts_them(
    tmp_path: Path,
) -> None:
    planned = _planned(tmp_path)
    for _, log, _ in planned:
        log.write_text("ValueError: x\n")
    (tmp_path / SUMMARY_NAME).write_text('{"state": "failed"}')
    inputs = discover([tmp_path])
    assert [summary.get("state") for summary in inputs.summaries] == ["failed"]
    assert sorted(source.rank for source in inputs.sources) == [rank for rank, _, _ in planned]
    step = PlannedStep(idle=200, computing=2000, communication=3000, overlap=100)
    write_kineto(profile_dir(tmp_path) / rank_name(1) / "attempt_0.pt.trace.json", 1, [step] * 2)
    found = gather(str(tmp_path))
    assert sorted(found.profiles) == [1]
    assert sorted(problem.rank for problem in found.problems) == [0, 2]  # logged, not traced
