from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib.util
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook
from rich.console import Console

from ascendify._parallel import PARALLEL_FROM
from ascendify.analyze.cpp import scan_cpp
from ascendify.analyze.findings import Finding
from ascendify.analyze.report import write_reports
from ascendify.analyze.static import (
    StaticAnalysis,
    analyze_path,
    analyze_python,
    findings_in_python,
)
from ascendify.analyze.unsafe import analyze_with_migration, print_unsafe
from ascendify.migrate import Options, run_migration
from ascendify.source import UndecodableSource
from ascendify.targets.facts import load_facts
from tests.conftest import RunCli

PROJECT = Path(__file__).parents[1] / "golden" / "analyze" / "gpu_project"
FACTS = load_facts("2.13.0")
_EXPECT = re.compile(r"(?:#|//) expect: (?P<code>AN\d+) (?P<op>\S+)")
_EXPECT_LINES = re.compile(
    r"// expect-lines: (?P<start>\d+)-(?P<end>\d+) (?P<code>AN\d+) (?P<op>.+)"
)

Row = tuple[str, int, int, str, str]


def _expected(root: Path) -> set[Row]:
    """Every ``# expect: CODE OP`` marker in the sample project, at its own line."""
    rows: set[Row] = set()
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            marker = _EXPECT.search(line)
            if marker:
                rows.add((relative, number, number, marker["code"], marker["op"]))
            span = _EXPECT_LINES.search(line)
            if span:
                rows.add((relative, int(span["start"]), int(span["end"]), span["code"], span["op"]))
    return rows


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(path.relative_to(root).as_posix().encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.mark.slow
def test_static_analysis_finds_exactly_the_marked_lines(tmp_path: Path, run_cli: RunCli) -> None:
    project = tmp_path / "gpu_project"
    shutil.copytree(PROJECT, project)
    before = _tree_digest(project)
    out = tmp_path / "report"
    result = run_cli(["analyze", "-i", str(project), "-o", str(out), "-v", "2.13"])
    assert result.returncode == 1, result.stderr
    assert "AN101" in result.stdout  # the console table
    # What migrate would make of the same project and marks unsafe, with how to see it.
    assert "migrate would make 1 unsafe edit(s)" in result.stdout
    assert "NPU105 read of a torch.cuda result whose NPU value differs, kept running: 1" in (
        result.stdout
    )
    assert f"see them: ascendify migrate -i {project.resolve()} --diff" in result.stdout

    with (out / "unsupported_api.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    found = {
        (r["File"], int(r["Start Line"]), int(r["End Line"]), r["Code"], r["OP"]) for r in rows
    }
    assert found == _expected(project)
    assert _tree_digest(project) == before  # the input is only read

    with (out / "cuda_op_list.csv").open(encoding="utf-8") as handle:
        ops = [tuple(row) for row in csv.reader(handle)]
    assert ops == [
        ("File", "Api"),
        ("csrc/ops.cpp", "fused.fused_add"),
        ("csrc/ops.cpp", "fused.Accumulator"),
        ("csrc/ops.cpp", "myops::scaled_add"),
    ]
    sheet = load_workbook(out / "unsupported_op.xlsx").active
    assert sheet.max_row == len(rows) + 1
    assert [cell.value for cell in sheet[1]] == [
        "File",
        "Start Line",
        "End Line",
        "OP",
        "Tips",
        "Code",
    ]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["skipped"] == [
        {"file": "broken.py", "reason": "cannot be parsed: invalid syntax (broken.py, line 1)"}
    ]
    assert sum(report["summary"].values()) == len(rows)


def test_aliases_resolve_and_lookalikes_are_not_reported() -> None:
    source = b"""\
import torch as th
from torch import cuda as gpu
sync = th.cuda.synchronize
gpu.nvtx.range_pop()
sync()
cuda = "cuda"
if args.cuda and tensor.is_cuda:
    tensor = tensor.cuda(non_blocking=True)
def memory_usage(): ...
memory_usage()
x = {"float64": 1}
th.cuda.nvtx.range_push("x")  # ascendify: ignore
th.cuda.nvtx.range_push(th.float64)  # ascendify: ignore[AN104, AN999]
"""
    found = {(f.start_line, f.code, f.op) for f in analyze_python(source, "a.py", FACTS)}
    assert found == {
        (3, "AN100", "torch.cuda.synchronize"),
        (4, "AN100", "torch.cuda.nvtx.range_pop"),
        (5, "AN100", "torch.cuda.synchronize"),  # called through the alias
        (7, "AN100", ".is_cuda"),
        (8, "AN100", ".cuda()"),  # a method call, unlike the flag args.cuda
        (13, "AN100", "torch.cuda.nvtx.range_push"),  # only AN104 is silenced there
    }


def test_the_chosen_release_decides_what_has_a_counterpart() -> None:
    source = b"import torch\ntorch.cuda.host_memory_stats()\n"  # added to torch_npu after 2.1
    codes = {
        version: [f.code for f in analyze_python(source, "a.py", load_facts(version))]
        for version in ("2.1.0", "2.13.0")
    }
    assert codes == {"2.1.0": ["AN101"], "2.13.0": ["AN100"]}


def test_cuda_ops_are_found_only_in_export_blocks() -> None:
    text = """\
/* PYBIND11_MODULE(old, m) { m.def("gone", &f); } */
void helper() { m.def("not_exported", &f); }
TORCH_LIBRARY_FRAGMENT(extra, lib) {
  lib.def("gelu_fast(Tensor x) -> Tensor");
  lib.def("gelu_fast.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
}
"""
    ops, findings = scan_cpp(text, "x.cpp", is_cuda=False)
    assert [op.name for op in ops] == ["extra::gelu_fast", "extra::gelu_fast.out"]
    assert [f.start_line for f in findings] == [4, 5]


def test_migrate_writes_the_reports_analyze_writes(tmp_path: Path) -> None:
    """Analysed on the migration's parse in its workers, or afterwards for what they did not see
    (C++ sources, links, hidden folders, files that do not parse), the reports are the same."""
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    (project / ".hidden").mkdir()
    (project / ".hidden" / "skipped.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    (project / "linked.py").symlink_to(project / "train.py")
    analysis = StaticAnalysis(load_facts(None).version)
    options = Options(source=project, output=tmp_path / "out", companion=analysis)
    quiet = Console(file=io.StringIO())
    assert run_migration(options, quiet, quiet) == 0
    in_result = tmp_path / "out" / "proj_msft" / analysis.directory
    alone = tmp_path / "alone"
    write_reports(analyze_path(project, analysis.version), alone, finding_tables=False)
    names = sorted(path.name for path in alone.iterdir())
    assert names == sorted(path.name for path in in_result.iterdir())
    for name in names:  # workbooks too: they hold no time of writing
        assert (in_result / name).read_bytes() == (alone / name).read_bytes(), name
    report = json.loads((alone / "report.json").read_text())
    assert report["findings"]
    assert report["custom_ops"]
    assert {skipped["file"] for skipped in report["skipped"]} == {"broken.py", "linked.py"}


LEFT_FOR_A_HUMAN = """\
import torch
import apex

x = torch.zeros(3, dtype=torch.float64).cuda()
model = torch.compile(torch.nn.Linear(3, 3))
torch.backends.cuda.matmul.allow_tf32 = True
y = x.double().cuda()
"""


def test_the_migration_lists_each_call_left_once_in_its_final_state(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(LEFT_FOR_A_HUMAN)
    analysis = StaticAnalysis(load_facts(None).version)
    options = Options(source=project, output=tmp_path / "out", companion=analysis)
    quiet = Console(file=io.StringIO())
    assert run_migration(options, quiet, quiet) == 0
    result = tmp_path / "out" / "proj_msft"
    sheet = load_workbook(result / "unsupported_op.xlsx").active
    assert sheet is not None
    rows = [(row[1], row[3], row[5], str(row[4]).split(":")[0]) for row in sheet.iter_rows(min_row=2, values_only=True)]  # fmt: skip
    # The rules' own rows and the analysis' rows the rules did not cover, in line order; the two
    # .cuda() calls (rewritten: see change_list.csv) and the TF32 switch (reported by NPU901 as
    # AN101 reports it) are listed by no second row.
    assert rows == [
        (2, "UNSUPPORTED", "NPU003", "apex does not run on NPU"),
        (4, "ADVICE", "AN104", "torch.float64"),
        (5, "ADVICE", "AN102", "torch.compile"),
        (6, "ADVICE", "NPU901", "torch.backends.cuda.matmul.allow_tf32"),
        (7, "ADVICE", "AN104", ".double()"),
    ]
    with (result / "unsupported_op.csv").open(newline="") as stream:
        assert len(list(csv.DictReader(stream))) == len(rows)
    # The analysis of the original, beside it, still names every call it found.
    report = json.loads((result / analysis.directory / "report.json").read_text())
    assert [f["op"] for f in report["findings"] if f["code"] == "AN100"] == [".cuda()", ".cuda()"]


def test_a_file_that_cannot_be_read_is_reported_and_the_rest_analysed(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\ntorch.cuda.memory_usage()\n")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    result = analyze_path(tmp_path)
    assert [(f.file, f.op) for f in result.findings] == [("train.py", "torch.cuda.memory_usage")]
    assert result.details["skipped"] == [
        {"file": "dangling.py", "reason": "not read: symbolic link, not followed"}
    ]


def _corpus() -> list[Path]:
    """Our GPU projects and golden cases, plus torch's own nn modules (real-world code)."""
    tests = Path(__file__).resolve().parents[1]
    files = sorted(tests.rglob("*.py"))
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.origin is not None:
        files += sorted((Path(spec.origin).parent / "nn").rglob("*.py"))
    return files


@pytest.mark.slow  # runs long: every file of the corpus analysed twice
def test_files_skipped_unparsed_would_have_had_no_findings() -> None:
    facts = load_facts("2.13.0")
    corpus = _corpus()
    for path in corpus:
        data = path.read_bytes()
        try:
            complete = findings_in_python(data, str(path), facts)
        except (SyntaxError, ValueError, UndecodableSource):
            continue
        shortcut = analyze_python(data, str(path), facts)
        assert shortcut == complete, path
    assert len(corpus) > 100


@pytest.mark.slow
def test_worker_processes_find_exactly_what_one_process_finds(tmp_path: Path) -> None:
    # Enough files to cross the parallel threshold: copies of the sample project.
    for index in range(12):
        shutil.copytree(PROJECT, tmp_path / f"copy{index}")
    alone = analyze_path(tmp_path, jobs=1)
    pooled = analyze_path(tmp_path, jobs=2)
    assert alone.details["files"] >= PARALLEL_FROM
    assert pooled.findings == alone.findings
    assert pooled.custom_ops == alone.custom_ops
    assert pooled.details == alone.details


UNSAFE = """\
import torch

local_rank = 0
model = torch.nn.Linear(2, 2).to(local_rank)
major, minor = torch.cuda.get_device_capability()
if major >= 8:
    model = model.half()
"""


def test_analyze_lists_the_unsafe_edits_migrate_makes(tmp_path: Path) -> None:
    """The same edits a real migration marks unsafe in its change list, from one pass whose
    analysis is what analysis alone finds."""
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    (project / "unsafe.py").write_text(UNSAFE)
    before = _tree_digest(project)
    result = analyze_with_migration(project, None, jobs=1)
    assert _tree_digest(project) == before  # a preview: nothing is written
    assert sorted(result.findings, key=Finding.sort_key) == sorted(
        analyze_path(project).findings, key=Finding.sort_key
    )
    quiet = Console(file=io.StringIO())
    assert run_migration(Options(source=project, output=tmp_path / "out"), quiet, quiet) == 0
    with (tmp_path / "out" / "proj_msft" / "change_list.csv").open(newline="") as stream:
        marked = [row for row in csv.DictReader(stream) if row["Safety"] == "unsafe"]
    found = result.details["unsafe_edits"]
    assert [
        (e["file"], e["start_line"], e["end_line"], e["rule"], e["message"]) for e in found["edits"]
    ] == [
        (r["File"], int(r["Start Line"]), int(r["End Line"]), r["Rule"], r["Message"])
        for r in marked
    ]
    # .major of train.py; the device index, the capability read and the value kept of unsafe.py
    assert found["by_rule"] == {"NPU102": 1, "NPU105": 2, "NPU304": 1}
    assert found["command"] == f"ascendify migrate -i {project.resolve()} --diff"


def test_a_project_without_unsafe_edits_says_nothing_of_them(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    result = analyze_with_migration(tmp_path, None, jobs=1)
    assert result.details["unsafe_edits"]["edits"] == []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_unsafe(result.details, tmp_path / "report.json")
    assert printed.getvalue() == ""
