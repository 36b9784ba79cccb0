"""Hints for failed ranks: each one recognised from real output, and nothing said otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendify.launch.hints import HINTS, hint_for
from tests.conftest import HANG_BOUND, RunCli

NCCL_TAIL = (
    '  File ".../distributed_c10d.py", line 2181, in _new_process_group_helper',
    '    raise RuntimeError("Distributed package doesn\'t have NCCL built in")',
    "RuntimeError: Distributed package doesn't have NCCL built in",
)


def test_codes_are_unique_and_stable() -> None:
    assert [hint.code for hint in HINTS] == ["RUN001"]


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (("python", "train.py", "--lr", "0.1"), "ascendify run python -m ascendify.auto train.py --lr 0.1"),
        (("/usr/bin/python3", "-m", "pkg.train"), "ascendify run /usr/bin/python3 -m ascendify.auto -m pkg.train"),
        (("./train.sh",), "ascendify run python -m ascendify.auto SCRIPT ARGS..."),
    ],
)  # fmt: skip
def test_a_cuda_script_without_gpus_gets_the_redirect_command(
    argv: tuple[str, ...], command: str
) -> None:
    hint = hint_for(NCCL_TAIL, argv)
    assert hint is not None
    assert hint.startswith("RUN001: ")
    assert f"`{command}`" in hint


@pytest.mark.parametrize(
    "tail",
    [
        ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",),
        ("ValueError: bad batch",),
        (),
    ],
)
def test_other_failures_get_no_hint(tail: tuple[str, ...]) -> None:
    assert hint_for(tail, ("python", "train.py")) is None


@pytest.mark.slow
def test_an_unmigrated_ddp_script_fails_once_with_the_hint(run_cli: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "ddp.py"
    script.write_text("import torch.distributed as dist\ndist.init_process_group(backend='nccl')\n")
    result = run_cli(
        [
            "run",
            "--nproc-per-node",
            "1",
            "--log-dir",
            str(tmp_path / "logs"),
            "python",
            str(script),
        ],
        cwd=tmp_path,
        timeout=HANG_BOUND,
    )
    assert result.returncode == 1
    everything = result.stdout + result.stderr
    assert everything.count("Traceback (most recent call last)") == 1, everything
    assert "NCCL" in result.stdout  # the rank's own traceback, on the console
    assert f"`ascendify run python -m ascendify.auto {script}`" in result.stderr
