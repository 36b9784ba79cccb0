"""The portable target widens ``if torch.cuda.is_available():`` only when nothing it guards reaches
a call left on CUDA, following calls into the project's other modules: a method of an object
imported from another module (``TRACKER.save()``), a function imported by name, and a function of a
module imported whole."""

from __future__ import annotations

from pathlib import Path

from ascendify.migrate._modes import Target
from ascendify.migrate._project_cuda import cuda_only_functions
from ascendify.targets.portable import has_no_counterpart
from tests.migrate._cases import migrate_project

RNG = """\
import torch


class Tracker:
    def save(self):
        self.saved = torch.cuda.get_rng_state()
        mark("save")


def mark(name):
    torch.cuda.nvtx.range_push(name)


def capability():
    return torch.cuda.get_device_capability()


def seed_all(seed):
    torch.cuda.manual_seed_all(seed)


TRACKER = Tracker()
"""

# Every check guards a call reaching a CUDA-only call in rng.py: the file stays as written.
KEPT = """\
import torch
import rng
from rng import TRACKER, capability as cap


def seed(value):
    torch.manual_seed(value)
    if torch.cuda.is_available():
        TRACKER.save()


def report():
    if torch.cuda.is_available():
        print(cap())
    if torch.cuda.is_available():
        rng.mark("report")
"""

# rng.seed_all reaches only what the migration ports: its check is widened.
WIDENED = """\
import torch
from rng import seed_all


def seed(value):
    if torch.cuda.is_available():
        seed_all(value)
"""


def _migrate(tmp_path: Path, target: Target) -> tuple[Path, dict[str, list[tuple[int, str]]]]:
    return migrate_project(
        tmp_path, target, {"rng.py": RNG, "kept.py": KEPT, "widened.py": WIDENED}
    )


def test_a_check_guarding_a_call_into_another_module_reaching_cuda_only_code_is_kept(
    tmp_path: Path,
) -> None:
    result, rules = _migrate(tmp_path, Target.PORTABLE)
    assert (result / "kept.py").read_text() == KEPT
    assert rules["kept.py"] == [(8, "PRT105"), (13, "PRT105"), (15, "PRT105")]
    assert "if torch.accelerator.is_available():" in (result / "widened.py").read_text()


def test_the_functions_reaching_a_cuda_only_call_are_read_through_their_calls() -> None:
    found = dict(cuda_only_functions(RNG.encode(), has_no_counterpart))
    assert found == {
        "save": "torch.cuda.nvtx.range_push",
        "mark": "torch.cuda.nvtx.range_push",
        "capability": "torch.cuda.get_device_capability",
    }
