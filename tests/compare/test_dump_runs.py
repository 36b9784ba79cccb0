"""``compare dump`` on real programs, unchanged: a seeded 3-block transformer, perturbed, under bf16
autocast, as inference, with 2 ranks under ``ascendify run``, and migrated for the NPU (slow)."""

from __future__ import annotations

import csv
import importlib.util
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.cli import main
from tests.conftest import HANG_BOUND, ascendify_env
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "scripts"
TINY = SCRIPTS / "tiny_transformer.py"
pytestmark = pytest.mark.slow


def _python(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = ascendify_env({"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    return subprocess.run(
        [sys.executable, *args], env={**base, **(env or {})},
        capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip


def _ascendify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return _python("-m", "ascendify", *args, env=env)


def _dump(
    out: Path, *command: str, options: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> Path:
    done = _ascendify("compare", "dump", "-o", str(out), *options, "--", *command, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _compare(a: Path, b: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return _ascendify("compare", str(a), str(b), *options)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "dump"
    return _dump(out, sys.executable, str(TINY), options=("--level", "tensors", "--backward"))


def test_two_seeded_runs_compare_clean_with_sampled_tensors_and_gradients(
    clean: Path, tmp_path: Path
) -> None:
    again = _dump(
        tmp_path / "again", sys.executable, str(TINY), options=("--level", "tensors", "--backward")
    )
    done = _compare(clean, again, "--tolerance", "strict")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no divergence" in done.stdout
    records = [json.loads(line) for line in (clean / "rank0.jsonl").read_text().splitlines()[1:]]
    assert {r["s"] for r in records} == {0, 1, 2}  # 3 optimizer steps
    assert {r["k"] for r in records} == {"fwd", "grad", "param_grad", "loss", "grad_norm"}
    assert {r["p"] for r in records} >= {"blocks.1.norm", "blocks.2.mlp.0", "TinyTransformer"}
    assert (clean / "rank0.tensors").stat().st_size > 0
    manifest = json.loads((clean / "manifest.json").read_text())
    assert manifest["ranks"]["0"]["torch"].startswith("2.13")
    assert manifest["command"][-1] == str(TINY)


@pytest.mark.parametrize(
    ("perturb", "module", "options"),
    [
        ("norm", "blocks.1.norm", ()),
        ("linear", "blocks.2.mlp.0", ("--level", "tensors", "--backward")),  # cosine 1, error 10%
    ],
)
def test_a_perturbed_module_is_the_first_divergence_and_later_modules_inherit(
    clean: Path, tmp_path: Path, perturb: str, module: str, options: tuple[str, ...]
) -> None:
    perturbed = _dump(
        tmp_path / perturb, sys.executable, str(TINY), "--perturb", perturb, options=options
    )
    done = _compare(clean, perturbed, "-o", str(tmp_path / "report"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"first divergence: {module} (step 0, call 0): " in done.stdout
    with (tmp_path / "report" / "compare.csv").open(encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    statuses = [row["status"] for row in rows]
    first = statuses.index("diverged")
    assert rows[first]["module"] == module
    assert set(statuses[:first]) == {"ok"}  # no earlier module is named
    assert statuses.count("diverged") == 1
    after = {
        row["status"] for row in rows if row["module"] in ("head", "loss") and row["kind"] != "grad"
    }
    assert after == {"inherited"}


def test_a_bf16_autocast_run_passes_the_bf16_and_auto_tolerances_and_fails_strict(
    clean: Path, tmp_path: Path
) -> None:
    bf16 = _dump(tmp_path / "bf16", sys.executable, str(TINY), "--bf16")
    assert _compare(clean, bf16, "--tolerance", "bf16").returncode == 0
    auto = _compare(clean, bf16)  # the manifest shows the autocast: bf16's budget
    assert auto.returncode == 0, auto.stdout
    assert "judged with bf16's budget" in auto.stdout
    strict = _compare(clean, bf16, "--tolerance", "strict")
    assert strict.returncode == 1
    assert "first divergence: " in strict.stdout
    assert "B ran under bfloat16 autocast" in strict.stdout


def test_an_inference_script_is_dumped_by_forward_call(tmp_path: Path) -> None:
    dump = _dump(
        tmp_path / "infer",
        sys.executable,
        str(TINY),
        "--infer",
        "--steps",
        "5",
        options=("--steps", "4"),
    )
    lines = (dump / "rank0.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["header"]["step_on"] == "forward"
    top = [json.loads(line) for line in lines[1:] if '"p":"TinyTransformer"' in line]
    assert [(r["s"], r["c"]) for r in top] == [(0, 0), (1, 0), (2, 0), (3, 0)]  # 4 of 5 forwards
    assert [len(r["in"]) for r in top] == [1, 1, 1, 1]  # passed by keyword, measured all the same


def test_two_ranks_under_the_launcher_dump_a_file_each_and_compare_clean(tmp_path: Path) -> None:
    launcher = ("-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "l"))
    command = (sys.executable, *launcher, sys.executable, str(TINY))
    a, b = (_dump(tmp_path / side, *command) for side in ("a", "b"))
    manifest = json.loads((a / "manifest.json").read_text())
    assert sorted(manifest["ranks"]) == ["0", "1"]
    assert manifest["ranks"]["1"]["world_size"] == 2
    assert '"p":"blocks.1.norm"' in (a / "rank1.jsonl").read_text()  # DDP's "module." is not a path
    done = _compare(a, b, "--tolerance", "strict")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("target", ["npu", "portable"])
def test_the_original_and_its_migration_compare_clean(
    clean: Path, tmp_path: Path, target: str
) -> None:
    migrated = _ascendify(
        "migrate", "-i", str(SCRIPTS), "-o", str(tmp_path / "m"), "-j", "1", "--target", target
    )
    assert migrated.returncode == 0, migrated.stderr
    script = tmp_path / "m" / f"{SCRIPTS.name}_msft" / TINY.name
    assert "npu" in script.read_text() if target == "npu" else script.exists()
    env = standin_env(ascendify_env()) if target == "npu" else None
    port = _dump(tmp_path / "port", sys.executable, str(script), env=env)
    done = _compare(clean, port, "--tolerance", "strict")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_original_under_the_runtime_redirect_compares_clean(
    clean: Path, tmp_path: Path
) -> None:
    redirected = _dump(tmp_path / "auto", sys.executable, "-m", "ascendify.auto", str(TINY))
    done = _compare(clean, redirected, "--tolerance", "strict")
    assert done.returncode == 0, done.stdout + done.stderr


def test_compare_run_dumps_both_commands_and_compares_them(tmp_path: Path) -> None:
    done = _ascendify(
        "compare", "run", "--a", shlex.join((sys.executable, str(TINY), "--steps", "1")), "--b",
        shlex.join((sys.executable, str(TINY), "--steps", "1", "--perturb", "act")),
        "-o", str(tmp_path / "out"), "--steps", "1",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "first divergence: blocks.1.mlp.1 (step 0, call 0)" in done.stdout  # GELU -> ReLU
    assert (tmp_path / "out" / "a" / "rank0.jsonl").exists()
    assert (tmp_path / "out" / "compare.html").exists()


def test_the_compare_command_imports_no_torch(clean: Path) -> None:
    probe = (
        "import sys; from ascendify.cli import main; "
        f"code = main(['compare', {str(clean)!r}, {str(clean)!r}]); "
        "assert 'torch' not in sys.modules; sys.exit(code)"
    )
    done = _python("-c", probe)
    assert done.returncode == 0, done.stderr


def test_a_command_that_does_not_exist_exits_2_and_leaves_no_dump(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "d"
    assert main(["compare", "dump", "-o", str(out), "--", "no-such-program-ascendify"]) == 2
    assert "cannot run 'no-such-program-ascendify'" in capsys.readouterr().err
    assert not out.exists()


def test_a_file_the_program_writes_into_the_dump_folder_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "d"
    script = tmp_path / "writer.py"
    script.write_text(
        "import os, pathlib\n"
        "folder = pathlib.Path(os.environ['ASCENDIFY_COMPARE_DUMP'])\n"
        "(folder / 'rank7.jsonl').write_text('my own notes\\n')\n"
        "(folder / 'rank99999999999.jsonl').write_text('{}\\n')\n",
        encoding="utf-8",
    )
    main(["compare", "dump", "-o", str(out), "--", sys.executable, str(script)])
    assert "rank7.jsonl was not written by the recorder" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "7" not in manifest["ranks"]


def test_stop_after_ends_a_long_run_cleanly_on_every_rank(tmp_path: Path) -> None:
    # 1,000 steps asked for; both ranks end after step 1 with exit 0, nothing left running
    launcher = ("-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "l"))
    command = (sys.executable, *launcher, sys.executable, str(TINY), "--steps", "1000")
    out = _dump(tmp_path / "d", *command, options=("--stop-after", "2"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["exit_code"] == 0
    for rank in ("0", "1"):
        steps = {
            json.loads(line)["s"]
            for line in (out / f"rank{rank}.jsonl").read_text().splitlines()[1:]
        }
        assert steps == {0, 1}
    rank_log = next((tmp_path / "l").rglob("rank_0.log"))
    assert "2 step(s) recorded; ending the program (--stop-after)" in rank_log.read_text()
    assert rank_log.read_text().count("\n") < 100  # far from 1,000 losses


THREADED = """
import threading

import torch

threading.Thread(target=threading.Event().wait, name="never-ends").start()  # not a daemon
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    optimizer.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
"""


def test_stop_after_ends_a_program_whose_thread_never_ends(tmp_path: Path) -> None:
    # the main thread's SystemExit waits for every non-daemon thread: a grace period, then a hard exit
    script = tmp_path / "threaded.py"
    script.write_text(THREADED, encoding="utf-8")
    out = _dump(tmp_path / "d", sys.executable, str(script), options=("--stop-after", "3"))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["exit_code"] == 0
    lines = (out / "rank0.jsonl").read_text().splitlines()[1:]
    assert {json.loads(line)["s"] for line in lines} == {0, 1, 2}


FUNCTIONAL = SCRIPTS / "functional_blocks.py"


def test_the_api_level_names_a_changed_operator_inside_its_module(tmp_path: Path) -> None:
    options = ("--level", "api", "--steps", "1")
    a = _dump(tmp_path / "a", sys.executable, str(FUNCTIONAL), "--steps", "1", options=options)
    same = _dump(
        tmp_path / "same", sys.executable, str(FUNCTIONAL), "--steps", "1", options=options
    )
    done = _compare(a, same, "--tolerance", "strict")
    assert done.returncode == 0, done.stdout + done.stderr
    b = _dump(
        tmp_path / "b", sys.executable, str(FUNCTIONAL), "--steps", "1", "--perturb", "softmax",
        options=options,
    )  # fmt: skip
    done = _compare(a, b)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "first divergence: operator torch.softmax in blocks.1 (step 0, call 0)" in done.stdout
    records = [json.loads(line) for line in (a / "rank0.jsonl").read_text().splitlines()[1:]]
    operators = {r["p"] for r in records if r["k"] == "api"}
    assert {
        "blocks.1:torch.matmul",
        "blocks.1:torch.softmax",
        "blocks.1:torch.nn.functional.gelu",
    } <= operators
    assert not any(p.endswith((".transpose", ".chunk", "__get__")) for p in operators)


def test_apis_keeps_only_the_operators_asked_for(tmp_path: Path) -> None:
    options = ("--level", "api", "--steps", "1", "--apis", "softmax")
    a = _dump(tmp_path / "a", sys.executable, str(FUNCTIONAL), "--steps", "1", options=options)
    records = [json.loads(line) for line in (a / "rank0.jsonl").read_text().splitlines()[1:]]
    assert {r["p"].rpartition(":")[2] for r in records if r["k"] == "api"} == {"torch.softmax"}


def test_nan_check_names_the_rank_step_operator_module_and_line_and_ends_both_ranks(
    tmp_path: Path,
) -> None:
    launcher = ("-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "l"))
    command = (
        sys.executable, *launcher, sys.executable, str(FUNCTIONAL), "--steps", "1000",
        "--nan-step", "2", "--nan-rank", "1",
    )  # fmt: skip
    done = _ascendify("compare", "dump", "-o", str(tmp_path / "d"), "--nan-check", "--", *command)
    assert done.returncode != 0
    found = json.loads((tmp_path / "d" / "nan_check.json").read_text())
    assert (found["rank"], found["step"], found["operator"], found["module"]) == (
        1, 2, "torch.log", "blocks.2",
    )  # fmt: skip
    assert found["where"].startswith(f"{FUNCTIONAL}:")
    assert "in forward" in found["where"]
    assert (
        "first NaN/inf: ascendify compare --nan-check: rank 1, step 2: operator torch.log in blocks.2"
        in done.stdout
    )
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["nan_check"]["operator"] == "torch.log"
    rank0 = next((tmp_path / "l").rglob("rank_0.log")).read_text()
    assert "step 999" not in rank0  # rank 0 was ended with rank 1, not left to run
    explained = _ascendify("explain", "--json", str(tmp_path / "l"))
    assert explained.returncode == 1, explained.stdout + explained.stderr
    verdict = json.loads(explained.stdout)
    assert verdict["root"]["rank"] == 1
    assert verdict["root"]["headline"]["id"] == "NAN-CHECK"


def test_nan_check_reports_a_float16_overflow_as_such(tmp_path: Path) -> None:
    command = (sys.executable, str(FUNCTIONAL), "--steps", "2", "--fp16-overflow")
    done = _ascendify("compare", "dump", "-o", str(tmp_path / "d"), "--nan-check", "--", *command)
    assert done.returncode == 65
    found = json.loads((tmp_path / "d" / "nan_check.json").read_text())
    assert found["float16_overflow"] is True
    assert found["module"] == "blocks.0"
    assert "float16 overflow (|x| > 65504 became inf)" in done.stdout


def test_nan_check_keeps_the_frames_of_a_project_in_a_folder_named_ascendify(
    tmp_path: Path,
) -> None:
    # the frames left out are those under torch's and ascendify's own folders, not any path
    # that merely contains /ascendify/ (a clone's default folder name)
    script = tmp_path / "ascendify" / "torch" / FUNCTIONAL.name
    script.parent.mkdir(parents=True)
    shutil.copy(FUNCTIONAL, script)
    command = (sys.executable, str(script), "--steps", "2", "--fp16-overflow")
    done = _ascendify("compare", "dump", "-o", str(tmp_path / "d"), "--nan-check", "--", *command)
    assert done.returncode == 65, done.stderr[-3000:]
    found = json.loads((tmp_path / "d" / "nan_check.json").read_text())
    assert found["where"].startswith(f"{script}:"), found["stack"]
    spec = importlib.util.find_spec("torch")
    assert spec is not None
    assert spec.submodule_search_locations
    torch_folder = spec.submodule_search_locations[0]
    assert not any(frame.startswith(torch_folder) for frame in found["stack"])


def _msprobe_dump(out: Path, *arguments: str) -> Path:
    """The functional script dumped by msprobe's own PrecisionDebugger, as a msprobe user does."""
    done = _python(str(FUNCTIONAL), "--steps", "2", "--msprobe", str(out), *arguments)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_msprobes_compare_accepts_a_dump_written_in_its_format(tmp_path: Path) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe (the test extra) is not installed")
    ours = _dump(
        tmp_path / "ours", sys.executable, str(FUNCTIONAL), "--steps", "2",
        options=("--steps", "2", "--format", "msprobe"),
    )  # fmt: skip
    theirs = _msprobe_dump(tmp_path / "msprobe")
    done = _python(
        "-c", "from msprobe.msprobe import main; main()", "compare",
        "--target_path", str(ours / "step0"), "--golden_path", str(theirs / "step0"),
        "--output_path", str(tmp_path / "result"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = next((tmp_path / "result").glob("compare_result_*.csv"))
    rows = list(csv.DictReader(result.open(encoding="utf-8")))
    assert {row["NPU Name"] for row in rows} >= {
        "Module.blocks.1.Block.forward.0.output.0", "Module.head.Linear.forward.0.output.0",
    }  # fmt: skip
    assert {row["Result"] for row in rows} == {"pass"}


def test_a_msprobe_dump_is_read_and_names_the_same_first_divergent_module(tmp_path: Path) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe (the test extra) is not installed")
    ours_a = _dump(
        tmp_path / "a", sys.executable, str(FUNCTIONAL), "--steps", "2", options=("--steps", "2")
    )
    ours_b = _dump(
        tmp_path / "b", sys.executable, str(FUNCTIONAL), "--steps", "2", "--perturb", "softmax",
        options=("--steps", "2"),
    )  # fmt: skip
    theirs_b = _msprobe_dump(tmp_path / "msprobe_b", "--perturb", "softmax")
    ours = _compare(ours_a, ours_b)
    mixed = _compare(ours_a, theirs_b)
    assert ours.returncode == mixed.returncode == 1, mixed.stdout + mixed.stderr
    line = "first divergence: blocks.1.out (step 0, call 0)"  # its input, from blocks.1's softmax
    assert line in ours.stdout
    assert line in mixed.stdout
    clean = _compare(ours_a, _msprobe_dump(tmp_path / "msprobe_a"))
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_run_nan_check_ends_the_job_naming_the_first_nan(tmp_path: Path) -> None:
    done = _ascendify(
        "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "l"), "--nan-check",
        sys.executable, str(FUNCTIONAL), "--steps", "1000", "--nan-step", "1", "--nan-rank", "0",
    )  # fmt: skip
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert (
        "first NaN/inf: ascendify compare --nan-check: rank 0, step 1: operator torch.log in blocks.2"
        in said
    )
    assert not list(tmp_path.glob("rank*.jsonl"))  # the sentinel records nothing
