"""``ascendify migrate`` end to end, in a subprocess, on a copy of the GPU project."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import openpyxl
import pytest

from ascendify._parallel import PARALLEL_FROM
from tests.conftest import RunCli
from tests.migrate._cases import PROJECT

pytestmark = pytest.mark.slow  # every test here starts processes

BINARY = bytes(range(256)) * 4


def snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under root: kind, mode and content hash (or link target)."""
    entries = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            entries[path.relative_to(root).as_posix()] = ("link", 0, os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            entries[path.relative_to(root).as_posix()] = ("file", info.st_mode, digest)
        else:
            entries[path.relative_to(root).as_posix()] = ("dir", info.st_mode, "")
    return entries


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The GPU project plus what a real checkout has: links, a binary tool, an outside link."""
    source = tmp_path / "gpu_project"
    shutil.copytree(PROJECT, source, symlinks=True)
    (source / "tools").mkdir()
    tool = source / "tools" / "nvcc_wrapper"
    tool.write_bytes(BINARY)
    tool.chmod(0o755)
    (source / "tools" / "train_link.py").symlink_to("../train_classifier.py")
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the project\n")
    (source / "outside_link").symlink_to(outside)
    (source / "dangling").symlink_to("does/not/exist")
    os.mkfifo(source / "data" / "pipe")
    return source


def test_migrates_the_whole_tree_and_never_writes_to_the_input(
    project: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    before = snapshot(project)
    out = tmp_path / "out"
    done = run_cli(["migrate", "-i", str(project), "-o", str(out), "-j", "2"])
    assert done.returncode == 0, done.stderr
    assert snapshot(project) == before

    result = out / "gpu_project_msft"
    after = snapshot(result)
    for rel, (kind, mode, digest) in before.items():
        if rel == "data/pipe":
            continue
        assert after[rel][0] == kind, rel
        if kind == "link":
            assert after[rel] == (kind, mode, digest), rel
        elif kind == "file":
            assert after[rel][1] == mode, rel
            if not rel.endswith(".py") or rel in {
                "models/resnet.py",
                "scripts/python2_eval.py",
                "scripts/broken_syntax.py",
            }:
                assert after[rel][2] == digest, f"{rel} must be byte-identical"
    assert (result / "tools" / "nvcc_wrapper").read_bytes() == BINARY
    assert "torch_npu.npu.set_device" in (result / "train_classifier.py").read_text()

    stderr = done.stderr
    assert "scripts/python2_eval.py" in stderr
    assert "scripts/broken_syntax.py" in stderr
    assert "outside_link" in stderr
    assert "data/pipe" in stderr
    assert not (result / "data" / "pipe").exists()
    log = (result / "msFmkTranspltlog.txt").read_text()
    assert "scripts/broken_syntax.py: copied unchanged: does not parse" in log
    assert "Operation Type: MODIFY" in log


def test_change_list_uses_original_line_numbers(
    project: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    assert run_cli(["migrate", "-i", str(project), "-o", str(out), "-j", "1"]).returncode == 0
    with (out / "gpu_project_msft" / "change_list.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert list(rows[0]) == [
        "File", "Start Line", "End Line", "Operation Type", "Message", "Rule", "Safety",
    ]  # fmt: skip
    original = (project / "train_classifier.py").read_text().splitlines()
    for row in rows:
        if row["File"] == "train_classifier.py" and row["Rule"] != "NPU001":
            line = original[int(row["Start Line"]) - 1]
            assert "cud" in line or "nccl" in line or "NCCL" in line, (row, line)
    assert {"INSERT", "MODIFY", "UNSUPPORTED", "ADVICE"} <= {r["Operation Type"] for r in rows}
    assert {"safe", "unsafe", "report-only"} <= {r["Safety"] for r in rows}

    left_in_place = [r for r in rows if r["Safety"] == "report-only"]
    with (out / "gpu_project_msft" / "unsupported_op.csv").open(newline="") as stream:
        assert list(csv.DictReader(stream)) == left_in_place
    sheet = openpyxl.load_workbook(out / "gpu_project_msft" / "unsupported_op.xlsx").active
    assert sheet is not None
    cells = list(sheet.iter_rows(values_only=True))
    assert [[str(cell) for cell in row] for row in cells] == [
        list(rows[0]), *([*r.values()] for r in left_in_place)
    ]  # fmt: skip
    assert all(isinstance(row[1], int) and isinstance(row[2], int) for row in cells[1:])


def test_the_result_carries_the_analysis_reports_unless_asked_not_to(
    project: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    assert run_cli(["migrate", "-i", str(project), "-o", str(out)]).returncode == 0
    analysis = out / "gpu_project_msft" / "ascendify_analysis"
    report = json.loads((analysis / "report.json").read_text())
    assert report["torch_npu_version"] == "2.13.0"
    assert any(finding["file"] == "train_classifier.py" for finding in report["findings"])
    # Its findings that the migration left are rows of the one unsupported_op at the top.
    assert sorted(path.name for path in analysis.iterdir()) == ["cuda_op_list.csv", "report.json"]
    # The mirrored project holds nothing of the analysis but this directory.
    assert not (out / "gpu_project_msft" / "report.json").exists()

    bare = tmp_path / "bare"
    done = run_cli(["migrate", "--no-analysis", "-i", str(project), "-o", str(bare)])
    assert done.returncode == 0, done.stderr
    assert not (bare / "gpu_project_msft" / "ascendify_analysis").exists()


def test_migrating_the_result_again_changes_nothing(
    project: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    assert run_cli(["migrate", "-i", str(project), "-o", str(out)]).returncode == 0
    again = run_cli(["migrate", "--check", "-i", str(out / "gpu_project_msft")])
    assert again.returncode == 0, again.stderr


def test_check_exits_1_and_writes_nothing(project: Path, tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "out"
    done = run_cli(["migrate", "--check", "-i", str(project), "-o", str(out)])
    assert done.returncode == 1
    assert "would change train_classifier.py" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--check", "--diff"])
def test_file_lines_are_never_wrapped_when_stderr_is_not_a_terminal(
    tmp_path: Path, run_cli: RunCli, flag: str
) -> None:
    folder = tmp_path / "src" / "a_rather_long_folder_name" / "and_a_nested_folder_below_it"
    folder.mkdir(parents=True)
    changed = folder / "a_training_script_with_a_long_descriptive_name.py"
    changed.write_text("import torch\nx = torch.zeros(1).cuda()\n")
    broken = folder / "a_broken_training_script_with_a_long_descriptive_name.py"
    broken.write_text("import torch\nx = torch.zeros(1).cuda(\n")
    done = run_cli(["migrate", flag, "-i", str(tmp_path / "src")])
    assert done.returncode == (1 if flag == "--check" else 0), done.stderr
    lines = done.stderr.splitlines()
    relative = lambda path: path.relative_to(tmp_path / "src").as_posix()  # noqa: E731
    if flag == "--check":
        assert f"would change {relative(changed)}" in lines
    assert any(
        line.startswith(f"copied unchanged {relative(broken)}: does not parse") for line in lines
    )


def test_diff_prints_a_unified_diff(project: Path, run_cli: RunCli) -> None:
    done = run_cli(["migrate", "--diff", "-i", str(project)])
    assert done.returncode == 0
    assert "--- a/train_lm.py\n+++ b/train_lm.py\n" in done.stdout
    assert '+DEVICE = "npu" if torch_npu.npu.is_available() else "cpu"\n' in done.stdout


def test_parallel_and_serial_runs_agree(project: Path, tmp_path: Path, run_cli: RunCli) -> None:
    # Enough Python files to cross the parallel threshold: copies of the project's own.
    copies = -(-PARALLEL_FROM // len(list(PROJECT.rglob("*.py"))))
    for index in range(copies):
        shutil.copytree(PROJECT, project / f"copy{index}")
    for jobs in ("1", "2"):
        done = run_cli(["migrate", "-i", str(project), "-o", str(tmp_path / jobs), "-j", jobs])
        assert done.returncode == 0
    serial, parallel = tmp_path / "1" / "gpu_project_msft", tmp_path / "2" / "gpu_project_msft"
    for path in serial.rglob("*.py"):
        assert path.read_bytes() == (parallel / path.relative_to(serial)).read_bytes()
    read = lambda root: (root / "change_list.csv").read_text()  # noqa: E731
    assert read(serial) == read(parallel)


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda src, tmp: ["-i", str(src), "-o", str(src / "inside")], "inside the input"),
        (lambda src, tmp: ["-i", str(src), "-o", str(src)], "inside the input"),
        (lambda src, tmp: ["-i", str(tmp / "missing"), "-o", str(tmp)], "not a directory"),
        (lambda src, tmp: ["-i", str(src)], "-o) is required"),
        (lambda src, tmp: ["-i", str(src), "-o", str(tmp), "-v", "0.1"], "no torch_npu facts"),
        (
            lambda src, tmp: ["-i", str(src), "-o", str(tmp), "-j", "0"],
            "-j/--jobs: takes a number of workers from 1",
        ),
    ],
)
def test_bad_input_is_refused_with_exit_2(
    project: Path, tmp_path: Path, run_cli: RunCli, make_args, message: str
) -> None:
    before = snapshot(project)
    done = run_cli(["migrate", *make_args(project, tmp_path)])
    assert done.returncode == 2
    assert message in done.stderr
    assert snapshot(project) == before


def test_existing_result_needs_force(project: Path, tmp_path: Path, run_cli: RunCli) -> None:
    out = tmp_path / "out"
    stale = out / "gpu_project_msft" / "stale.txt"
    stale.parent.mkdir(parents=True)
    stale.write_text("old run")
    done = run_cli(["migrate", "-i", str(project), "-o", str(out)])
    assert done.returncode == 2
    assert "--force" in done.stderr
    assert stale.exists()
    assert run_cli(["migrate", "-i", str(project), "-o", str(out), "--force"]).returncode == 0
    assert not stale.exists()
    assert (out / "gpu_project_msft" / "train_lm.py").exists()


def test_an_input_inside_its_own_result_directory_is_refused(
    tmp_path: Path, run_cli: RunCli
) -> None:
    source = tmp_path / "x_msft" / "x"
    source.mkdir(parents=True)
    (source / "a.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    done = run_cli(["migrate", "-i", str(source), "-o", str(tmp_path), "--force"])
    assert done.returncode == 2
    assert "inside the result directory" in done.stderr
    assert (source / "a.py").exists()
