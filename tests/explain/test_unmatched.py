"""A verdict for every failed run, when no catalogue entry matches: the failing rank, how it ended,
its innermost exception or last error line, and the end of its log, marked "no catalogue entry
matched". Real runs and jobs: a bare ``sys.exit(3)``, ranks that end with ``sys.exit('fatal: ...')``;
and a script started with a misspelled flag (argparse, exit 2), which the catalogue now names."""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ascendify.explain import explain_paths
from ascendify.explain.analysis import cause_line, render, to_json
from ascendify.explain.unmatched import innermost_chain
from ascendify.jobs.store import JobStore
from tests.conftest import HANG_BOUND, ascendify_env, run_bounded
from tests.web.conftest import Serve

ARGPARSE = (
    "import argparse\n"
    "parser = argparse.ArgumentParser(prog='train.py')\n"
    "parser.add_argument('--lr', type=float, default=0.1)\n"
    "print('parsing', flush=True)\n"
    "parser.parse_args()\n"
)
EXIT_3 = (
    "import os, sys\n"
    "print('step 1 loss 0.5', flush=True)\n"
    "if os.environ['RANK'] == '1':\n"
    "    sys.exit(3)\n"
)
# A rank that leaves a FIFO in its log folder (where explain reads) and then fails.
FIFO = (
    "import os, sys\n"
    "folder = os.path.dirname(os.environ['TORCHELASTIC_ERROR_FILE'])\n"
    "os.mkfifo(os.path.join(folder, f\"trap_{os.environ['RANK']}.log\"))\n"
    "sys.exit('fatal: the data set is missing')\n"
)


def _chained(kind: str) -> list[str]:
    """The lines Python prints for a real chain: KeyError raised again as RuntimeError."""
    try:
        try:
            {}["step"]
        except KeyError as error:
            if kind == "from":
                raise RuntimeError("the batch could not be built") from error
            raise RuntimeError("the batch could not be built")  # noqa: B904 (the implicit chain)
    except RuntimeError as outer:
        return "".join(traceback.format_exception(outer)).splitlines()
    raise AssertionError("not raised")


@pytest.mark.parametrize("kind", ["from", "during"])
def test_the_innermost_exception_of_a_chain_comes_first(kind: str) -> None:
    lines = ["step 1", *_chained(kind)]
    assert innermost_chain(lines) == [
        "KeyError: 'step'",
        "RuntimeError: the batch could not be built",
    ]


def test_only_the_last_traceback_counts() -> None:
    earlier = "".join(traceback.format_exception(ValueError("handled and logged"))).splitlines()
    lines = ["Traceback (most recent call last):", *earlier[1:], "retrying", *_chained("from")]
    assert innermost_chain(lines)[0] == "KeyError: 'step'"
    assert innermost_chain(["step 1", "all done"]) == []


def test_a_chained_traceback_that_no_entry_matches_names_its_innermost_and_wrapper(
    tmp_path: Path,
) -> None:
    """Exceptions whose names end in neither Error nor Exception are no catalogue entry's."""
    log = ["step 3", "Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
           "    load()", "StopIteration", "",
           "The above exception was the direct cause of the following exception:", "",
           "Traceback (most recent call last):", '  File "train.py", line 11, in <module>',
           "    raise Abort('no data') from error", "train.Abort: no data"]  # fmt: skip
    (tmp_path / "rank_0.log").write_text("\n".join(log) + "\n")
    verdict = explain_paths([tmp_path])
    assert verdict.found
    assert verdict.root is None
    assert verdict.unmatched is not None
    assert (verdict.unmatched.error, verdict.unmatched.wrapper) == (
        "StopIteration",
        "train.Abort: no data",
    )
    text = render(verdict)
    assert "innermost exception: StopIteration" in text
    assert "raised again as: train.Abort: no data" in text


def _run(tmp_path: Path, name: str, script: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / f"train_{name}.py").write_text(script)
    logs = tmp_path / f"{name}-logs"
    argv = [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir",
            str(logs), sys.executable, str(tmp_path / f"train_{name}.py")]  # fmt: skip
    if name == "argparse":
        argv.append("--lrr=0.01")  # the misspelled flag
    return run_bounded(argv, env=ascendify_env()), logs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path]]:
    """Two failed ``ascendify run``s: each one's stderr and log folder."""
    folder = tmp_path_factory.mktemp("runs")
    done = {}
    for name, script in (("argparse", ARGPARSE), ("exit3", EXIT_3)):
        result, logs = _run(folder, name, script)
        assert result.returncode != 0, result.stderr
        done[name] = (result.stderr, logs)
    return done


@pytest.mark.slow
def test_an_argparse_error_gets_a_verdict(runs: dict[str, tuple[str, Path]]) -> None:
    stderr, logs = runs["argparse"]
    end = next(line for line in stderr.splitlines() if "cause: " in line)
    assert "cause: rank 0: ARGPARSE (Python) - compare the command line with the usage" in end
    explained = run_bounded([sys.executable, "-m", "ascendify", "explain", str(logs)],
                            env=ascendify_env())  # fmt: skip
    assert explained.returncode == 1, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0].startswith("root cause: rank 0"), lines
    assert lines[1] == "  train.py: error: unrecognized arguments: --lrr=0.01"


@pytest.mark.slow
def test_a_bare_exit_gets_a_verdict(runs: dict[str, tuple[str, Path]]) -> None:
    stderr, logs = runs["exit3"]
    end = next(line for line in stderr.splitlines() if "cause: " in line)
    assert (
        "cause: rank 1: exit code 3 (no catalogue entry matched; its log ends: step 1 loss 0.5)"
        in end
    )
    verdict = explain_paths([logs])
    assert verdict.unmatched is not None
    assert verdict.unmatched.who == 1
    assert verdict.unmatched.exit_code == 3
    assert verdict.unmatched.error is None
    document = to_json(verdict)
    assert (document["found"], document["matched"], document["order"]) == (True, False, [1])
    assert document["root"]["headline"]["id"] == "UNMATCHED"
    assert cause_line(verdict) == document["cause"]


def _job(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_bounded([sys.executable, "-m", "ascendify", "job", *args],
                       env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(store)}))  # fmt: skip


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A store with two failed jobs: a misspelled flag, and ranks that leave a FIFO in their log
    folder; their ids by name."""
    folder = tmp_path_factory.mktemp("jobs")
    store = folder / "store"
    ids = {}
    for name, script, extra in (("argparse", ARGPARSE, ["--hyper", "lrr=0.01"]),
                                ("fifo", FIFO, [])):  # fmt: skip
        code = folder / name
        code.mkdir()
        (code / "train.py").write_text(script)
        submitted = _job(store, "submit", "--code-dir", str(code), "--boot-file", "train.py",
                         "--cards", "2", "--wait", *extra)  # fmt: skip
        assert submitted.returncode == 1, submitted.stderr
        ids[name] = submitted.stdout.splitlines()[0]
    return store, ids


@pytest.mark.slow
def test_a_failed_job_shows_its_verdict_everywhere(jobs: tuple[Path, dict[str, str]]) -> None:
    store, ids = jobs
    job_id = ids["argparse"]
    row = next(line for line in _job(store, "list").stdout.splitlines() if line.startswith(job_id))
    assert "rank 0: ARGPARSE" in row
    described = _job(store, "describe", job_id).stdout
    why = described.split("why (from every rank's logs):\n", 1)[1]
    assert why.startswith("  root cause: rank 0"), why
    verdict = _served_verdict(store, job_id)
    assert verdict["root"]["rank"] == 0
    assert verdict["root"]["headline"]["id"] == "ARGPARSE"
    assert verdict["root"]["headline"]["text"].endswith("unrecognized arguments: --lrr=0.01")


@pytest.mark.slow
def test_a_failed_job_shows_its_unmatched_verdict_everywhere(
    jobs: tuple[Path, dict[str, str]],
) -> None:
    store, ids = jobs
    job_id = ids["fifo"]  # its ranks end with sys.exit('fatal: ...'), which no entry names
    row = next(line for line in _job(store, "list").stdout.splitlines() if line.startswith(job_id))
    assert ": fatal: the data set is missing" in row
    described = _job(store, "describe", job_id).stdout
    why = described.split("why (from every rank's logs):\n", 1)[1]
    assert why.startswith("  no catalogue entry matched: rank "), why
    verdict = _served_verdict(store, job_id)
    assert verdict["root"]["headline"]["meaning"].startswith("no catalogue entry matched")
    assert verdict["root"]["headline"]["text"] == "fatal: the data set is missing"
    assert "fatal: the data set is missing" in verdict["unmatched"]["last_lines"]


def _served_verdict(store: Path, job_id: str) -> dict[str, Any]:
    served = Serve(JobStore(store))
    try:
        with urllib.request.urlopen(served() + f"api/jobs/{job_id}", timeout=HANG_BOUND) as page:
            verdict: dict[str, Any] = json.loads(page.read())["verdict"]
    finally:
        served.close()
    return verdict


@pytest.mark.slow
def test_a_job_whose_ranks_leave_a_fifo_ends_failed_with_a_verdict(
    jobs: tuple[Path, dict[str, str]],
) -> None:
    store, ids = jobs
    job_id = ids["fifo"]  # the fixture's --wait returned: the job ended
    described = _job(store, "describe", job_id)
    assert described.returncode == 0, described.stderr
    assert described.stdout.splitlines()[0].endswith(": failed"), described.stdout
    assert "fatal: the data set is missing" in described.stdout
    assert sorted(path.name for path in (store / job_id).rglob("trap_*.log")) == [
        "trap_0.log", "trap_1.log",
    ]  # fmt: skip
    assert "trap_1.log: not a regular file (a FIFO)" in described.stdout
