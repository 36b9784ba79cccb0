from __future__ import annotations

import csv
import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from ascendify.analyze.coverage import CPU_HOST_VARIANTS, OpStatus, op_status
from ascendify.analyze.trace import TraceRequest, child_command
from ascendify.errors import AscendifyError
from ascendify.targets.facts import load_facts
from tests.conftest import RunCli

TRAIN = """\
    import sys

    import torch
    from torch import nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(144, 2)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(int(sys.argv[1])):
        loss = model(torch.randn(8, 3, 8, 8, device=device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    covariance = torch.randn(4, 4, dtype=torch.float64, device=device)
    covariance = covariance @ covariance.T
    eigenvalues, _ = torch.linalg.eigh(covariance)
    print("trained", sys.argv[1:])
"""
EIGH_LINE = 16


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def _trace(
    tmp_path: Path, run_cli: RunCli, name: str, source: str, *args: str
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``analyze --trace`` of a script ``name`` holding ``source``: its report folder and the run."""
    script = _write(tmp_path, name, source)
    out = tmp_path / "out"
    return out, run_cli(["analyze", "--trace", "-o", str(out), "--", "python", str(script), *args])


def _findings(out: Path) -> list[dict[str, str]]:
    with (out / "unsupported_op.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_trace_reports_eigh_in_float64_but_not_training_ops(
    tmp_path: Path, run_cli: RunCli
) -> None:
    out, result = _trace(tmp_path, run_cli, "train.py", TRAIN, "2")
    assert result.returncode == 1, result.stderr
    assert "trained ['2']" in result.stdout  # the script ran with its own arguments

    rows = _findings(out)
    missing = [
        (row["OP"], row["File"], row["Start Line"]) for row in rows if row["Code"] == "AN201"
    ]
    assert missing == [("aten::_linalg_eigh", "train.py", str(EIGH_LINE))]
    double_lines = {int(row["Start Line"]) for row in rows if row["Code"] == "AN202"}
    assert {EIGH_LINE - 2, EIGH_LINE - 1, EIGH_LINE} <= double_lines

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    ops = report["ops"]
    for name in ("aten::addmm", "aten::convolution", "aten::convolution_backward"):
        assert ops[name]["status"] == OpStatus.NPU_KERNEL.value
    for adam_op in ("aten::lerp_.Scalar", "aten::addcdiv_", "aten::sqrt"):
        assert ops[adam_op]["status"] == OpStatus.NPU_KERNEL.value
    assert ops["aten::addmm"]["calls"] == 2
    assert report["trace"]["cpu_fallback_ops"] == ["aten::_linalg_eigh"]
    assert report["trace"]["exit_code"] == 0
    assert (out / "unsupported_op.xlsx").stat().st_size > 0
    with (out / "op_coverage.csv").open(encoding="utf-8") as handle:
        first = next(csv.DictReader(handle))
    assert (first["Op"], first["Status"]) == ("aten::_linalg_eigh", "cpu-fallback")


ATTENTION_AND_LSTM = """\
    import torch
    from torch import nn
    from torch.nn import functional as F

    q = torch.randn(2, 2, 4, 8, requires_grad=True)
    F.scaled_dot_product_attention(q, q, q).sum().backward()
    lstm = nn.LSTM(8, 8, batch_first=True)
    lstm(torch.randn(2, 3, 8))[0].sum().backward()
"""


@pytest.mark.slow
def test_trace_leaves_what_ran_only_because_the_host_is_a_cpu_out_of_the_verdict(
    tmp_path: Path, run_cli: RunCli
) -> None:
    out, result = _trace(tmp_path, run_cli, "train.py", ATTENTION_AND_LSTM)
    assert result.returncode == 0, result.stdout + result.stderr  # nothing the NPU lacks
    assert _findings(out) == []
    host_only = {
        "aten::_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward": "scaled_dot_product_attention",
        "aten::mkldnn_rnn_layer": "lstm.input",
        "aten::mkldnn_rnn_layer_backward": "lstm.input",
    }
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["trace"]["cpu_host_only_ops"] == host_only
    assert report["trace"]["cpu_fallback_ops"] == []
    assert {report["ops"][name]["status"] for name in host_only} == {"cpu-host-only"}
    said = " ".join(result.stdout.split())
    assert "ran only because this host is a CPU" in said
    assert "aten::mkldnn_rnn_layer (lstm.input)" in said


@pytest.mark.slow
def test_trace_stops_an_endless_script_at_the_operator_limit(
    tmp_path: Path, run_cli: RunCli
) -> None:
    script = _write(
        tmp_path,
        "forever.py",
        """\
        import torch

        x = torch.ones(3)
        while True:
            try:
                x = x * 1.0
            except Exception:  # user code that swallows errors must not swallow the limit
                pass
        """,
    )
    out = tmp_path / "out"
    result = run_cli(
        ["analyze", "--trace", "--max-ops", "500", "-o", str(out), "--", "python", str(script)]
    )
    assert result.returncode == 0, result.stderr
    trace = json.loads((out / "report.json").read_text(encoding="utf-8"))["trace"]
    assert trace["stopped"] == "max-ops"
    assert trace["total_ops"] == 500


@pytest.mark.slow
def test_trace_of_a_failing_script_keeps_what_ran(tmp_path: Path, run_cli: RunCli) -> None:
    out, result = _trace(
        tmp_path,
        run_cli,
        "crash.py",
        """\
        import torch

        torch.linalg.eigh(torch.eye(2, dtype=torch.float64))
        raise RuntimeError("data directory missing")
        """,
    )
    assert result.returncode == 1
    assert "data directory missing" in result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["trace"]["error"] == "RuntimeError: data directory missing"
    assert report["trace"]["cpu_fallback_ops"] == ["aten::_linalg_eigh"]


@pytest.mark.slow
def test_trace_of_a_script_that_skips_every_exit_hook_keeps_what_ran(
    tmp_path: Path, run_cli: RunCli
) -> None:
    script = _write(
        tmp_path,
        "abrupt.py",
        """\
        import os

        import torch

        torch.linalg.eigh(torch.eye(2, dtype=torch.float64))
        x = torch.ones(3) + 1
        x = torch.ones(3) + 1
        os._exit(0)  # skips atexit, finally blocks and every other exit hook
        """,
    )
    out = tmp_path / "out"
    result = run_cli(["analyze", "--trace", "-o", str(out), "--", "python", str(script)])
    assert result.returncode == 1, result.stderr  # the float64 finding
    trace = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert trace["trace"]["cpu_fallback_ops"] == ["aten::_linalg_eigh"]
    assert trace["trace"]["stopped"] == (
        "the script left without the tracer's end (os._exit or a signal)"
    )
    assert trace["ops"]["aten::add.Tensor"]["calls"] >= 1


def test_operator_status_follows_the_chosen_release() -> None:
    facts = load_facts("2.13.0")
    assert op_status("aten::addmm", [], facts) is OpStatus.NPU_KERNEL
    assert op_status("aten::t", ["CompositeExplicitAutograd"], facts) is OpStatus.COMPOSITE
    assert op_status("aten::_linalg_eigh", [], facts) is OpStatus.CPU_FALLBACK
    assert op_status("torchvision::nms", [], facts) is OpStatus.CPU_FALLBACK
    wrapper = ["CompositeExplicitAutogradNonFunctional"]
    assert op_status("aten::_linalg_eigh", wrapper, facts) is OpStatus.CPU_FALLBACK
    unlisted_overload = "aten::addmm.not_an_overload"
    assert op_status(unlisted_overload, wrapper, facts) is OpStatus.VIA_OUT_VARIANT


def test_cpu_kernels_of_operators_the_npu_has_are_not_in_the_verdict() -> None:
    facts = load_facts("2.13.0")
    for variant in CPU_HOST_VARIANTS:
        if variant.startswith(("_scaled_dot_product", "mkldnn_rnn_layer")):
            assert op_status(f"aten::{variant}", [], facts) is OpStatus.CPU_HOST_ONLY, variant
    # The CPU's int4 matmul stands for one torch_npu lacks: still a fallback.
    assert op_status("aten::_weight_int4pack_mm_for_cpu", [], facts) is OpStatus.CPU_FALLBACK


def test_the_cpu_variants_are_every_cpu_kernel_torch_names() -> None:
    import torch  # here, not at the top: collecting the fast tests should not load torch

    names = set(torch._C._dispatch_get_all_op_names())
    for_cpu = {name.removeprefix("aten::") for name in names if name.endswith(("_for_cpu", "_for_cpu_backward"))}  # fmt: skip
    assert for_cpu == {variant for variant in CPU_HOST_VARIANTS if "_for_cpu" in variant}
    for variant, operator in CPU_HOST_VARIANTS.items():
        assert f"aten::{variant}" in names
        assert f"aten::{operator}" in names


def test_composite_registrations_are_read_from_torch() -> None:
    import torch  # here, not at the top: collecting the fast tests should not load torch

    has = torch._C._dispatch_has_kernel_for_dispatch_key
    assert has("aten::linalg_eigh", "CompositeImplicitAutograd")
    assert not has("aten::_linalg_eigh", "CompositeImplicitAutograd")
    assert not has("aten::_linalg_eigh", "CompositeExplicitAutograd")


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["bash", "train.sh"],
        ["python"],
        ["python", "-m"],
        ["python", "-u"],
        ["python", "-c", "print(1)"],
    ],
)
def test_commands_that_cannot_be_traced_are_refused(command: list[str]) -> None:
    with pytest.raises(AscendifyError):
        child_command(TraceRequest(command), Path("trace.json"))


def test_child_runs_the_tracer_in_front_of_the_users_interpreter_and_arguments() -> None:
    command = ["python3.11", "-u", "-X", "dev", "-m", "pkg.train", "--lr", "1"]
    request = TraceRequest(command, max_seconds=5)
    assert child_command(request, Path("t.json")) == [
        "python3.11",
        "-u",
        "-X",
        "dev",
        "-m",
        "ascendify.analyze.tracer",
        "--trace-out",
        "t.json",
        "--max-seconds",
        "5",
        "--",
        "-m",
        "pkg.train",
        "--lr",
        "1",
    ]


@pytest.mark.slow
def test_a_module_is_traced_with_its_arguments_and_a_bad_version_stops_before_running(
    tmp_path: Path, run_cli: RunCli
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    _write(
        package,
        "train.py",
        """\
        import sys

        import torch

        assert sys.argv[1:] == ["--steps", "2"], sys.argv
        x = torch.arange(4.0)
        print("sorted", torch.sort(x, descending=True).values.tolist())
        """,
    )
    out = tmp_path / "out"
    command = ["--", "python", "-m", "pkg.train", "--steps", "2"]
    result = run_cli(["analyze", "--trace", "-o", str(out), *command], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "sorted [3.0, 2.0, 1.0, 0.0]" in result.stdout
    ops = json.loads((out / "report.json").read_text(encoding="utf-8"))["ops"]
    assert ops["aten::sort"]["status"] == OpStatus.NPU_KERNEL.value

    bad = run_cli(["analyze", "--trace", "-v", "0.9", "-o", str(tmp_path / "bad"), *command])
    assert bad.returncode == 2
    assert bad.stderr.startswith("ascendify analyze: error: no torch_npu facts for version '0.9'")
    assert "sorted" not in bad.stdout


@pytest.mark.slow
def test_a_gpu_script_runs_here_through_the_runtime_redirect(
    tmp_path: Path, run_cli: RunCli
) -> None:
    out, result = _trace(
        tmp_path,
        run_cli,
        "gpu_train.py",
        """\
        import torch
        from torch import nn

        model = nn.Linear(8, 2).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            loss = model(torch.randn(4, 8).cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        torch.cuda.synchronize()
        print("gpu script finished")
        """,
    )
    assert result.returncode == 0, result.stderr
    assert "gpu script finished" in result.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["trace"]["runtime_redirect"] is True
    assert report["ops"]["aten::addmm"]["calls"] == 2
    assert report["summary"] == {}
