"""The torch_npu stand-in, run as tests use it: a separate Python with its site first on the path."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, again_after_teardown_abort
from tests.npu_standin import SITE, standin_env

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"


def run_python(
    code_or_script: str | Path, *args: str, standin: bool, launch: Sequence[str] = ()
) -> str:
    """Run a script (or code) in a fresh interpreter, with the stand-in importable or not;
    ``launch`` goes before the script (``-m torch.distributed.run ...``)."""
    plain = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    env = standin_env(plain) if standin else plain
    command = (
        [sys.executable, *launch, str(code_or_script)]
        if isinstance(code_or_script, Path)
        else [sys.executable, "-c", textwrap.dedent(code_or_script)]
    )

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_BOUND,
            check=False,
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
            "legacy_type": "torch.zeros(2).type(torch.npu.HalfTensor).dtype",
            "legacy_isinstance": "isinstance(torch.ones(1).npu(), torch.npu.FloatTensor)",
            "capability": "torch.npu.get_device_capability()",
            "rng": "(torch.manual_seed(7), torch.npu.set_rng_state(torch.npu.get_rng_state()),"
            " torch.npu.initial_seed())[2]",
            "stream": "isinstance(torch.npu.current_stream(), torch.npu.Stream)",
            "default_device": "torch.set_default_device('npu') or torch.ones(1).device",
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
    assert results["legacy_type"] == "torch.float16"
    assert results["legacy_isinstance"] == "True"
    assert results["capability"] == "None"
    assert results["rng"] == "7"
    assert results["stream"] == "True"
    assert results["default_device"] == "device(type='cpu')"


@pytest.mark.slow
def test_what_the_wheel_lacks_or_rejects_fails_loudly() -> None:
    results = outcomes(
        {
            "missing": "torch.npu.set_device_index",
            "missing_top": "torch_npu.npu_not_an_op",
            "extra_argument": "torch.npu.set_device(0, 1)",
            "unknown_keyword": "torch.npu.amp.GradScaler(init_scale=2.0, scale=1)",
            "bad_method_call": "torch.npu.Event().elapsed_time()",
            "not_emulated": "torch.npu.utilization()",
            "operator": "torch_npu.npu_format_cast(torch.ones(1), 2)",
            "operator_arguments": "torch_npu.npu_format_cast(torch.ones(1), 2, 3)",
            "object": "torch_npu.npu.backends.fft_plan_cache.clear()",
            "module": "__import__('torch_npu.contrib.transfer_to_npu')",
            "class_constant": "torch_npu.profiler.ProfilerLevel.Level0 is not None",
            "unemulated_class": "torch.npu.NPUGraph()",
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
        "NotImplementedError: npu stand-in does not emulate torch_npu.npu.utilization"
    )
    assert results["operator"].endswith("does not emulate torch_npu.npu_format_cast")
    assert results["operator_arguments"].startswith(
        "TypeError: torch_npu.npu_format_cast: no overload takes these arguments"
    )
    assert results["object"].endswith(
        "does not emulate torch_npu.npu.backends.fft_plan_cache.clear"
    )
    assert results["module"].endswith("does not emulate module torch_npu.contrib.transfer_to_npu")
    assert results["class_constant"] == "True"
    assert results["unemulated_class"].endswith("does not emulate torch_npu.npu.graphs.NPUGraph")


def test_nothing_in_the_package_imports_the_standin() -> None:
    package = HERE.parents[1] / "src"
    offenders = [
        path for path in package.rglob("*.py") if "_npu_standin" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


@pytest.mark.slow
def test_the_npu_profiler_records_the_cpu_and_writes_a_trace(tmp_path: Path) -> None:
    code = f"""
        import torch, torch_npu
        profiler = torch_npu.profiler
        config = profiler._ExperimentalConfig(profiler_level=profiler.ProfilerLevel.Level1)
        with profiler.profile(
            activities=[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.NPU],
            schedule=profiler.schedule(wait=0, warmup=1, active=1, repeat=1),
            on_trace_ready=profiler.tensorboard_trace_handler({str(tmp_path)!r}),
            experimental_config=config,
        ) as prof:
            for _ in range(3):
                torch.ones(3, device="npu").sum()
                prof.step()
    """
    run_python(code, standin=True)
    traces = list(tmp_path.glob("*.pt.trace.json"))
    assert len(traces) == 1
    assert '"aten::sum"' in traces[0].read_text(encoding="utf-8")


def test_every_emulation_names_something_the_wheel_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt key would leave the real name refusing and the emulation unused."""
    monkeypatch.syspath_prepend(str(SITE))
    from _npu_standin.emulation import EMULATED
    from _npu_standin.module import api

    names = set()
    for module, description in api()["modules"].items():
        for name, entry in description["names"].items():
            names.add(entry.get("defined_in", f"{module}.{name}"))
    assert len(EMULATED) > 60
    assert sorted(set(EMULATED) - names) == []


@pytest.mark.slow
def test_fusion_attention_follows_each_documented_argument() -> None:
    """npu_fusion_attention against attention written out by hand: layouts, head_num, scale,
    atten_mask (True = masked), sparse_mode 2/3 (top-left / bottom-right causal, compressed mask),
    keep_prob, TND with cumulative lengths; a mask sparse_mode 3 cannot read is refused."""
    out = run_python(
        """
        import json, torch, torch_npu

        def attend(q, k, v, mask=None, scale=1.0):  # (B, N, S, D), mask True = masked
            scores = (q @ k.transpose(-2, -1)) * scale
            if mask is not None:
                scores = scores.masked_fill(mask, float("-inf"))
            return torch.softmax(scores, -1) @ v

        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(2, 3, 4, 8, generator=g) for _ in range(3))  # BNSD
        kl, vl = (torch.randn(2, 3, 6, 8, generator=g) for _ in range(2))
        fa = torch_npu.npu_fusion_attention
        compressed = torch.ones(2048, 2048, dtype=torch.bool).triu(1)
        top_left = torch.ones(4, 6, dtype=torch.bool).triu(1)
        bottom_right = torch.ones(4, 6, dtype=torch.bool).triu(3)
        own = torch.rand(4, 4, generator=g) > 0.7
        own[:, 0] = False  # no row wholly masked
        bsnd = lambda t: t.transpose(1, 2)
        bsh = lambda t: t.transpose(1, 2).reshape(2, t.shape[2], 24)
        sbh = lambda t: bsh(t).transpose(0, 1)
        checks = {
            "bnsd_scale": (fa(q, k, v, 3, "BNSD", scale=0.5)[0], attend(q, k, v, scale=0.5)),
            "bsnd": (fa(bsnd(q), bsnd(k), bsnd(v), 3, "BSND")[0], bsnd(attend(q, k, v))),
            "bsh": (fa(bsh(q), bsh(k), bsh(v), 3, "BSH")[0], bsh(attend(q, k, v))),
            "sbh": (fa(sbh(q), sbh(k), sbh(v), 3, "SBH")[0], sbh(attend(q, k, v))),
            "own_mask": (fa(q, k, v, 3, "BNSD", atten_mask=own)[0], attend(q, k, v, own)),
            "top_left": (fa(q, kl, vl, 3, "BNSD", atten_mask=compressed, sparse_mode=2)[0],
                         attend(q, kl, vl, top_left)),
            "bottom_right": (fa(q, kl, vl, 3, "BNSD", atten_mask=compressed, sparse_mode=3)[0],
                             attend(q, kl, vl, bottom_right)),
        }
        t = torch.randn(5, 3, 8, generator=g)  # TND: sequences of 2 and 3 tokens
        def causal(a, b):
            one = t[None, a:b].transpose(1, 2)
            mask = torch.ones(b - a, b - a, dtype=torch.bool).triu(1)
            return attend(one, one, one, mask).transpose(1, 2)[0]

        pieces = [causal(0, 2), causal(2, 5)]
        checks["tnd"] = (fa(t, t, t, 3, "TND", atten_mask=compressed, sparse_mode=3,
                            actual_seq_qlen=[2, 5], actual_seq_kvlen=[2, 5])[0], torch.cat(pieces))
        result = {name: float((a - b).abs().max()) for name, (a, b) in checks.items()}
        torch.manual_seed(0)
        dropped = fa(q, k, v, 3, "BNSD", keep_prob=0.5)[0]
        result["keep_prob_changes"] = float((dropped - checks["bnsd_scale"][1]).abs().max())
        try:
            fa(q, k, v, 3, "BNSD", atten_mask=own, sparse_mode=3)
        except ValueError as error:
            result["refused"] = "compressed" in str(error)
        try:
            fa(q, k, v, 4, "BNSD")
        except ValueError as error:
            result["head_num"] = "head_num" in str(error)
        print(json.dumps(result))
        """,
        standin=True,
    )
    result = json.loads(out)
    assert result.pop("refused") is True
    assert result.pop("head_num") is True
    assert result.pop("keep_prob_changes") > 0.1
    assert all(difference < 1e-5 for difference in result.values()), result


@pytest.mark.slow
def test_npu_generators_are_what_npu_tensors_draw_from_and_lazy_calls_run() -> None:
    """As the wheel: default_generators indexed by npu, _lazy_call running its callback once the
    npu is initialised; and the generator is the one npu tensors draw from (the CPU's)."""
    from ascendify.targets import load_facts

    results = outcomes(
        {
            "private": "sorted(__import__('_npu_standin.emulation').emulation.EMULATED_PRIVATE)",
            "count": "len(torch_npu.npu.default_generators)",
            "is_cpu": "torch_npu.npu.default_generators[0] is torch.default_generator",
            "lazy": "(s := torch.npu.get_rng_state(), a := torch.rand(2, device='npu'),"
            " torch_npu.npu._lazy_call(lambda: torch_npu.npu.default_generators[0].set_state(s)),"
            " torch.equal(a, torch.rand(2, device='npu')))[3]",
            "seeded": "(torch.npu.manual_seed(3), torch.initial_seed())[1]",
            "cuda_device": "torch.npu.set_rng_state(torch.npu.get_rng_state(), 'cuda')",
            "index": "torch.npu.get_rng_state(1)",
        }
    )
    facts = load_facts(
        json.loads(
            run_python(
                "import torch_npu, json; print(json.dumps(torch_npu.__version__))", standin=True
            )
        )
    )
    private = ast.literal_eval(results["private"])
    assert private
    assert all(facts.has(name) for name in private)
    assert results["count"] == "1"
    assert results["is_cpu"] == results["lazy"] == "True"
    assert results["seeded"] == "3"
    assert results["cuda_device"].startswith("ValueError: Expected a npu device")
    assert results["index"].startswith("RuntimeError: Invalid device ID 1")
