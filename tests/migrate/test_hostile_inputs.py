"""``migrate`` and ``analyze`` against hostile trees: links named like reports, FIFOs, devices, huge and
deeply nested sources, link loops, a full or read-only disk, interruptions. The command line runs
in-process (``cli.main``, ``-j 1``) except where a real signal needs a real process."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from rich.console import Console

from ascendify.cli import DEBUG_VARIABLE, main
from ascendify.errors import AscendifyError
from ascendify.migrate import Options, migrate_tree, plan_tree, prepare_output
from ascendify.migrate._report import print_summary
from ascendify.migrate._tree import INCOMPLETE_MARKER
from ascendify.migrate.rulefile import load_rule_file
from tests.conftest import HANG_BOUND, ascendify_env
from tests.migrate.test_command import snapshot

CUDA = b"import torch\nx = torch.ones(1).cuda()\n"
LONG_SUM = b"y = " + b"+".join([b"1"] * 500) + b"\n"  # valid, deeper than a recursive walk survives


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``ascendify ARGS`` in this process: (exit code, stderr)."""
    code = main(list(args))
    return code, capsys.readouterr().err


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    source = tmp_path / "proj"
    source.mkdir()
    (source / "train.py").write_bytes(CUDA)
    return source


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Stands for ~/.bashrc: a file outside everything, which nothing may change."""
    path = tmp_path / "bashrc"
    path.write_text("# my shell settings\n")
    return path


def test_links_named_like_the_reports_are_never_written_through(
    project: Path, tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("change_list.csv", "msFmkTranspltlog.txt", "unsupported_op.csv"):
        (project / name).symlink_to(victim)
    (project / "ascendify_analysis").symlink_to(elsewhere)
    (project / "a;touch X;#.py").write_bytes(CUDA)  # a name is data, never a command
    before = snapshot(project)

    code, stderr = run(
        capsys, "migrate", "-i", str(project), "-o", str(tmp_path / "out"), "-j", "1"
    )

    assert code == 0, stderr
    assert victim.read_text() == "# my shell settings\n"
    assert list(elsewhere.iterdir()) == []
    assert snapshot(project) == before
    result = tmp_path / "out" / "proj_msft"
    for name in ("change_list.csv", "msFmkTranspltlog.txt", "unsupported_op.csv"):
        assert not (result / name).is_symlink()
        assert f"not copied {name}: the migration writes its own file of that name" in stderr
    assert (result / "ascendify_analysis" / "report.json").is_file()
    assert "a;touch X;#.py" in (result / "change_list.csv").read_text()
    assert not (tmp_path / "X").exists()
    assert not Path("X").exists()
    assert f"result: {result}" in stderr


def test_link_loops_and_links_out_are_kept_as_links(
    project: Path, tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "a.py").symlink_to("b.py")
    (project / "b.py").symlink_to("a.py")
    (project / "loop").symlink_to("loop")
    (project / "out.py").symlink_to(victim)
    code, stderr = run(
        capsys, "migrate", "-i", str(project), "-o", str(tmp_path / "out"), "-j", "1"
    )
    assert code == 0, stderr
    result = tmp_path / "out" / "proj_msft"
    assert {name: os.readlink(result / name) for name in ("a.py", "b.py", "loop", "out.py")} == {
        "a.py": "b.py",
        "b.py": "a.py",
        "loop": "loop",
        "out.py": str(victim),
    }
    assert "symlink kept, not followed a.py -> b.py" in stderr
    report = json.loads((result / "ascendify_analysis" / "report.json").read_text())
    assert {entry["file"] for entry in report["skipped"]} == {"a.py", "b.py", "out.py"}


@pytest.mark.timeout(60)
def test_fifos_devices_huge_and_deep_sources_are_handled_by_both_commands(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(project / "fifo.py")
    (project / "zero.py").symlink_to("/dev/zero")
    with (project / "big.py").open("wb") as stream:
        stream.write(CUDA)
        stream.truncate(50 * 1024 * 1024)
    (project / "deep.py").write_bytes(CUDA + LONG_SUM)
    (project / "too_deep.py").write_bytes(CUDA + b"y = " + b"+".join([b"1"] * 5000) + b"\n")
    started = time.perf_counter()

    code, stderr = run(
        capsys, "migrate", "-i", str(project), "-o", str(tmp_path / "out"), "-j", "1"
    )
    assert code == 0, stderr
    code = main(["analyze", "-i", str(project), "-o", str(tmp_path / "an")])
    analyzed = capsys.readouterr()

    assert code == 0, analyzed.err  # .cuda() has an NPU counterpart: nothing blocks
    assert "skipped fifo.py: not read: not a regular file" in analyzed.out
    assert "skipped big.py: not read: file too large" in analyzed.out
    assert time.perf_counter() - started < 30
    result = tmp_path / "out" / "proj_msft"
    assert b"torch.ones(1).npu()" in (result / "deep.py").read_bytes()
    assert (result / "big.py").stat().st_size == 50 * 1024 * 1024
    assert "copied unchanged big.py: file too large" in stderr
    assert "copied unchanged too_deep.py: does not parse" in stderr
    assert "not copied fifo.py: not a regular file" in stderr
    for report_dir in (result / "ascendify_analysis", tmp_path / "an"):
        report = json.loads((report_dir / "report.json").read_text())
        reasons = {entry["file"]: entry["reason"] for entry in report["skipped"]}
        assert reasons == {
            "big.py": "not read: file too large (52428800 bytes, limit 10485760)",
            "fifo.py": "not read: not a regular file",
            "zero.py": "not read: symbolic link, not followed",
            "too_deep.py": "cannot be parsed: nested deeper than Python itself can compile",
        }
        assert {finding["file"] for finding in report["findings"]} == {"train.py", "deep.py"}


def test_a_file_that_cannot_be_read_is_reported_not_copied(project: Path, tmp_path: Path) -> None:
    (project / "gone.py").write_bytes(CUDA)
    options = Options(source=project, output=tmp_path / "out")
    result_dir = prepare_output(options)
    plan = plan_tree(project)
    (project / "gone.py").unlink()  # between planning and reading, as a file can vanish
    result = migrate_tree(options, result_dir, plan)
    outcomes = {outcome.path: (outcome.status, outcome.detail) for outcome in result.files}
    assert outcomes["gone.py"] == ("not copied", "cannot read: No such file or directory")
    summary = io.StringIO()
    print_summary(result, Console(file=summary, width=200))
    assert "not copied gone.py: cannot read" in summary.getvalue()
    assert "copied unchanged gone.py" not in summary.getvalue()


def test_a_result_that_was_not_finished_is_marked_and_explained(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    result_dir = prepare_output(Options(source=project, output=out))  # a run that stops here
    assert result_dir is not None
    assert (result_dir / INCOMPLETE_MARKER).is_file()

    code, stderr = run(capsys, "migrate", "-i", str(project), "-o", str(out), "-j", "1")
    assert code == 2
    assert "holds an incomplete result" in one_line_error(stderr)
    assert "--force" in stderr
    code, stderr = run(capsys, "migrate", "-i", str(project), "-o", str(out), "-j", "1", "--force")
    assert code == 0, stderr
    assert not (result_dir / INCOMPLETE_MARKER).exists()


def test_analyze_refuses_to_write_into_the_project(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "report.json").write_text('{"mine": true}\n')
    for output in (project, project / "reports"):
        code, stderr = run(capsys, "analyze", "-i", str(project), "-o", str(output))
        assert code == 2
        assert f"output {output} is inside the input {project}" in one_line_error(stderr)
    assert (project / "report.json").read_text() == '{"mine": true}\n'
    assert not (project / "reports").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"rename_function": []}' + " " * (2 * 1024 * 1024), "is larger than 1 MiB"),
        (b"\xff\xfe".decode("latin-1"), "is not UTF-8 text (byte 0xff at offset 0)"),
    ],
    ids=["deep", "huge", "not-utf8"],
)
def test_bad_rule_files_are_one_message(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_bytes(text.encode("latin-1"))
    out = tmp_path / "out"
    code, stderr = run(capsys, "migrate", "-i", str(project), "-o", str(out), "--rules", str(rules))
    assert code == 2
    line = one_line_error(stderr)
    assert str(rules) in line
    assert message in line
    assert not out.exists()


def _rule_file(path: Path, entries: int) -> Path:
    rows = [{"old": f"lib.cuda_ops.f{i}", "new": f"lib.npu_ops.f{i}"} for i in range(entries)]
    path.write_text(json.dumps({"rename_function": rows}, indent=1))
    return path


def test_loading_rules_takes_time_linear_in_their_number(tmp_path: Path) -> None:
    small = _rule_file(tmp_path / "small.json", 1_000)
    large = _rule_file(tmp_path / "large.json", 10_000)  # ~0.7 MB: within the 1 MiB a file may have

    def seconds(path: Path) -> float:
        # This process's CPU time: the machine may be busy with other work, which wall time counts.
        started = time.process_time()
        rules = load_rule_file(path)
        assert rules[-1].origin == f"{path}:{len(rules) * 4}"  # each entry located on its line
        return time.process_time() - started

    seconds(small)  # warm up
    ratio = min(seconds(large) for _ in range(2)) / min(seconds(small) for _ in range(2))
    assert ratio < 30, f"10x the rules took {ratio:.0f}x the time"  # quadratic: about 100x


def test_a_traceback_only_with_the_debug_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("migrate", "-i", str(tmp_path / "missing"), "-o", str(tmp_path / "out"))
    code, stderr = run(capsys, *args)
    assert code == 2
    assert one_line_error(stderr) == (
        f"ascendify migrate: error: input {tmp_path / 'missing'} is not a directory"
    )
    monkeypatch.setenv(DEBUG_VARIABLE, "1")
    with pytest.raises(AscendifyError, match="is not a directory"):
        main(list(args))


def _tmpfs(point: Path, options: str) -> Iterator[Path]:
    """A small tmpfs mounted at ``point`` (root only; skipped elsewhere), unmounted afterwards.

    Mounted while the test is set up: the mount is the fixture's process, not the test's."""
    point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield point
    subprocess.run(["umount", "-l", str(point)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    yield from _tmpfs(tmp_path / "small", "size=1m")


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    yield from _tmpfs(tmp_path / "ro", "ro,size=1m")


def test_a_full_disk_is_one_message_and_leaves_no_truncated_file(
    project: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "data").mkdir()
    (project / "data" / "weights.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    for index in range(20):
        (project / f"model{index}.py").write_bytes(CUDA)
    out = small_disk / "out"

    code, stderr = run(capsys, "migrate", "-i", str(project), "-o", str(out), "-j", "1")

    assert code == 2
    line = one_line_error(stderr)
    assert "No space left on device" in line
    assert f"the result in {out / 'proj_msft'} is incomplete" in line
    result = out / "proj_msft"
    assert (result / INCOMPLETE_MARKER).is_file()
    leftovers = [p for p in result.rglob("*") if p.name.startswith(".ascendify-")]
    assert leftovers == []
    for path in result.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".bin"):
            assert path.stat().st_size > 0, f"{path} is truncated"
    code, stderr = run(capsys, "migrate", "-i", str(project), "-o", str(out), "-j", "1")
    assert code == 2
    assert "holds an incomplete result" in one_line_error(stderr)


def test_a_read_only_output_parent_is_one_message(
    project: Path, read_only_disk: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read_only = read_only_disk
    for command in ("migrate", "analyze"):
        code, stderr = run(capsys, command, "-i", str(project), "-o", str(read_only / "out"))
        assert code == 2, command
        line = one_line_error(stderr)
        assert str(read_only / "out") in line
        assert "Read-only file system" in line


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_ctrl_c_leaves_the_result_marked_incomplete_and_no_worker_behind(tmp_path: Path) -> None:
    source = tmp_path / "big_project"
    # Seconds of work however fast the migration gets: the interrupt lands mid-run.
    for package in range(4):
        (source / f"pkg{package}").mkdir(parents=True)
        for module in range(32):
            (source / f"pkg{package}" / f"m{module}.py").write_bytes(CUDA * 4000)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "ascendify", "migrate", "-i", str(source), "-o", str(out)]
    # A session of its own: Ctrl-C in a terminal signals the whole foreground process group. A
    # terminal's foreground job answers SIGINT even when these tests run as a background job, whose
    # SIGINT the shell ignores: an ignored signal stays ignored across exec, a handled one does not.
    ignored = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            [*command, "-j", "2"],
            env=ascendify_env(),
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    finally:
        signal.signal(signal.SIGINT, ignored)
    result = out / "big_project_msft"
    deadline = time.monotonic() + HANG_BOUND
    workers: list[psutil.Process] = []
    while time.monotonic() < deadline and len(workers) < 2:
        workers = psutil.Process(process.pid).children(recursive=True)
        time.sleep(0.05)
    assert len(workers) >= 2, "the run never started its workers"
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=HANG_BOUND)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"interrupted; the result in {result} is incomplete" in stderr
    assert (result / INCOMPLETE_MARKER).is_file()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert alive == []
    again = subprocess.run(
        command,
        env=ascendify_env(),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    assert again.returncode == 2
    assert "holds an incomplete result" in again.stderr


@pytest.mark.slow
def test_a_main_file_named_like_a_shell_command_is_run_as_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    main_name = "a;touch X;#$(touch Y).py"
    (source / main_name).write_text("import os\nopen('ran', 'w').write(os.environ['RANK'])\n")
    out = tmp_path / "out"
    args = ["migrate", "-i", str(source), "-o", str(out), "-j", "1", "--target", "portable"]
    code, stderr = run(capsys, *args, "distributed", "-m", main_name)
    assert code == 0, stderr
    result = out / "proj_msft_multi"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(NPUS="1", PYTHON=sys.executable, PATH="/usr/bin:/bin")  # the script's own loop
    done = subprocess.run(
        [str(result / "run_distributed_npu.sh")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (result / "ran").read_text() == "0"
    assert [path.name for path in tmp_path.rglob("[XY]")] == []


def _project_with(tmp_path: Path, name: str, kind: str) -> tuple[Path, Path]:
    source = tmp_path / "proj"
    (source / "pkg").mkdir(parents=True)
    (source / "train.py").write_text(
        "import torch\nx = torch.lgamma(torch.ones(2)).cuda()\ntorch.cuda.synchronize()\n"
    )
    (source / "pkg" / "__init__.py").write_text("")
    (source / "pkg" / "use.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    taken = source / "pkg" / name
    if kind == "own":
        taken.write_text('"""The project\'s own helpers."""\ndef device():\n    return "npu"\n')
    elif kind == "dangling link":
        taken.symlink_to(tmp_path / "nowhere")
    return source, taken


@pytest.mark.parametrize(
    ("flags", "name", "kind"),
    [
        (["--target", "portable"], "portable_device.py", "own"),
        (["--target", "portable"], "portable_device.py", "dangling link"),
        (["-sim"], "ascend_function", "dangling link"),
        (["-sim"], "ascend_function.py", "dangling link"),
    ],
)
def test_a_file_of_the_project_the_run_would_replace_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], name: str, kind: str
) -> None:
    source, taken = _project_with(tmp_path, name, kind)
    out = tmp_path / "out"
    code, stderr = run(capsys, "migrate", "-i", str(source), "-o", str(out), "-j", "1", *flags)
    assert code == 2
    flag = flags[0] if flags[0] == "-sim" else "--target portable"
    assert one_line_error(stderr).endswith(
        f"but {taken} is the project's own: rename it, or migrate without {flag}"
    )
    assert not out.exists()  # refused before anything was written


def test_a_helper_an_earlier_portable_run_wrote_is_not_the_projects_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, _ = _project_with(tmp_path, "portable_device.py", "none")
    first = tmp_path / "first"
    args = ["-j", "1", "--target", "portable"]
    code, stderr = run(capsys, "migrate", "-i", str(source), "-o", str(first), *args)
    assert code == 0, stderr
    [result] = first.iterdir()
    assert (result / "pkg" / "portable_device.py").is_file()
    code, stderr = run(capsys, "migrate", "-i", str(result), "-o", str(tmp_path / "again"), *args)
    assert code == 0, stderr
