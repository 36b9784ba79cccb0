"""The torch_npu stand-in, run as tests use it: a separate Python with its site first on the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import again_after_teardown_abort

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
SCRIPTS = HERE / "scripts"


def run_python(
    code_or_script: str | Path, *args: str, standin: bool, launch: Sequence[str] = ()
) -> str:
    """Run a script (or code) in a fresh interpreter, with the stand-in importable or not;
    ``launch`` goes before the script (``-m torch.distributed.run ...``)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if standin:
        env["PYTHONPATH"] = str(SITE)
    command = (
        [sys.executable, *launch, str(code_or_script)]
        if isinstance(code_or_script, Path)
        else [sys.executable, "-c", textwrap.dedent(code_or_script)]
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args], env=env, capture_output=True, text=True, timeout=240, check=False
        )

    done = again_after_teardown_abort(run(), run)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_training_steps_on_npu_equal_the_cpu_bit_for_bit() -> None:
    on_cpu = run_python(SCRIPTS / "train_step.py", "cpu", standin=False)
    on_npu = run_python(SCRIPTS / "train_step.py", "npu:0", standin=True)
    assert on_cpu.count("loss ") == 3
    assert on_npu == on_cpu


@pytest.mark.slow
def test_ddp_over_hccl_on_npu_equals_gloo_on_the_cpu() -> None:
    def torchrun(kind: str) -> str:
        launch = ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
        return run_python(Path(SCRIPTS / "ddp_step.py"), kind, standin=kind == "npu", launch=launch)

    on_cpu, on_npu = torchrun("cpu"), torchrun("npu")
    assert on_cpu.count("loss ") == 3
    assert on_npu.replace("backend hccl", "backend gloo") == on_cpu
    assert "backend hccl" in on_npu


def outcomes(calls: dict[str, str]) -> dict[str, str]:
    """Evaluate each expression under the stand-in: its repr, or the exception type and message."""
    code = f"""
        import json, torch, torch_npu
        results = {{}}
        for name, expression in {calls!r}.items():
            try:
                results[name] = repr(eval(expression))
            except Exception as error:
                results[name] = f"{{type(error).__name__}}: {{error}}"
        print(json.dumps(results))
    """
    parsed: dict[str, str] = json.loads(run_python(code, standin=True))
    return parsed


@pytest.mark.slow
def test_npu_devices_place_on_the_cpu_and_torch_npu_answers() -> None:
    results = outcomes(
        {
            "factory": "torch.zeros(2, device='npu').device",
            "to": "torch.ones(2).to(torch.device('npu', 0)).device",
            "method": "torch.ones(2).npu().device",
            "module": "next(torch.nn.Linear(2, 2).npu().parameters()).device",
            "equal": "torch.device('npu:0') == torch.device('npu', 0)",
            "available": "torch.npu.is_available()",
            "set_device": "torch.npu.set_device('npu:0')",
            "bad_index": "torch.npu.set_device(1)",
            "accelerator": "torch.accelerator.current_accelerator()",
            "hccl": "torch.distributed.is_backend_available('hccl')",
            "event": "torch.npu.Event(enable_timing=True).query()",
            "mstx": "torch_npu.npu.mstx.range_push('step')",
            "version": "torch_npu.__version__",
        }
    )
    assert {results[k] for k in ("factory", "to", "method", "module")} == {"device(type='cpu')"}
    assert results["equal"] == "True"
    assert results["available"] == "True"
    assert results["set_device"] == "None"
    assert results["bad_index"].startswith("RuntimeError: Invalid device ID 1")
    assert results["accelerator"] == "device(type='npu')"
    assert results["hccl"] == "True"
    assert results["event"] == "True"
    assert results["mstx"] == "0"
    assert results["version"] == "'2.13.0'"


@pytest.mark.slow
def test_what_the_wheel_lacks_or_rejects_fails_loudly() -> None:
    results = outcomes(
        {
            "missing": "torch.npu.set_device_index",
            "missing_top": "torch_npu.npu_not_an_op",
            "extra_argument": "torch.npu.set_device(0, 1)",
            "unknown_keyword": "torch.npu.amp.GradScaler(init_scale=2.0, scale=1)",
            "bad_method_call": "torch.npu.Event().elapsed_time()",
            "not_emulated": "torch.npu.get_rng_state()",
            "operator": "torch_npu.npu_format_cast(torch.ones(1), 2)",
            "object": "torch.npu.FloatTensor(2)",
        }
    )
    assert results["missing"].startswith("AttributeError: module 'torch_npu.npu' has no attribute")
    assert results["missing_top"].startswith("AttributeError: module 'torch_npu' has no")
    assert results["extra_argument"] == (
        "TypeError: torch_npu.npu.utils.set_device(device): too many positional arguments"
    )
    assert results["unknown_keyword"].startswith("TypeError: torch_npu.npu.amp.grad_scaler")
    assert "unexpected keyword argument 'scale'" in results["unknown_keyword"]
    assert results["bad_method_call"].startswith("TypeError: torch_npu.npu.streams.Event.elapsed")
    assert results["not_emulated"] == (
        "NotImplementedError: npu stand-in does not emulate torch_npu.npu.random.get_rng_state"
    )
    assert results["operator"].endswith("does not emulate torch_npu.npu_format_cast")
    assert results["object"].endswith("does not emulate torch_npu.npu.FloatTensor")


def test_nothing_in_the_package_imports_the_standin() -> None:
    package = HERE.parents[1] / "src"
    offenders = [
        path for path in package.rglob("*.py") if "_npu_standin" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
