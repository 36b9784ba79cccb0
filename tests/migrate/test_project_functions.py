"""Device strings followed into the project's own functions in other modules: a positional (or
keyword) argument of a function whose parameter reaches ``.to()`` / ``device=`` there is a device,
as ``device=`` is, on both targets; a function whose parameter reaches no device keeps the literal
and its NPU308 row."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendify.migrate._modes import Target
from ascendify.migrate._project_functions import DeviceFunction, device_functions
from tests.migrate._cases import migrate_project

UTILS = """\
import torch


def move(obj, device):
    return obj.to(device)


def place(state, where):
    target = where
    return {key: move(value, target) for key, value in state.items()}


def load(path, location):
    return torch.load(path, map_location=location)


def label(x, name):
    print(name)
    return x
"""

TRAIN = """\
import torch
import utils
from utils import label, move, place as put

x = move(torch.ones(2), "cuda")
y = put({"a": x}, "cuda:0")
z = utils.move(x, f"cuda:{0}")
w = put({"a": x}, where="cuda")
label(x, "cuda")
s = utils.load("cuda_ckpt.pt", "cuda")
other.move(x, "cuda")
"""

RUN = """\
from ..utils import move
import torch

move(torch.ones(1), "cuda")
"""

NPU_TRAIN = """\
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import utils
from utils import label, move, place as put

x = move(torch.ones(2), "npu")
y = put({"a": x}, "npu:0")
z = utils.move(x, f"npu:{0}")
w = put({"a": x}, where="npu")
label(x, "cuda")
s = utils.load("cuda_ckpt.pt", "npu")
other.move(x, "cuda")
"""

PORTABLE_TRAIN = """\
import torch
import utils
from utils import label, move, place as put
import portable_device

x = move(torch.ones(2), portable_device.device_type())
y = put({"a": x}, f"{portable_device.device_type()}:0")
z = utils.move(x, f"{portable_device.device_type()}:{0}")
w = put({"a": x}, where=portable_device.device_type())
label(x, "cuda")
s = utils.load("cuda_ckpt.pt", portable_device.device_type())
other.move(x, "cuda")
"""


def _migrate(tmp_path: Path, target: Target) -> tuple[Path, dict[str, list[tuple[int, str]]]]:
    return migrate_project(
        tmp_path, target, {"utils.py": UTILS, "train.py": TRAIN, "pkg/run.py": RUN}
    )


def test_a_device_passed_to_a_project_function_is_rewritten_on_the_npu_target(
    tmp_path: Path,
) -> None:
    result, rules = _migrate(tmp_path, Target.NPU)
    assert (result / "train.py").read_text() == NPU_TRAIN
    assert (result / "utils.py").read_text() == UTILS  # nothing of CUDA there
    assert 'move(torch.ones(1), "npu")' in (result / "pkg/run.py").read_text()
    # The label stays and is reported; the object's method is no function of the project.
    assert rules["train.py"] == [
        (1, "NPU001"), (5, "NPU301"), (6, "NPU301"), (7, "NPU301"), (8, "NPU301"), (9, "NPU308"),
        (10, "NPU301"),
    ]  # fmt: skip


@pytest.mark.cuda_build
def test_a_device_passed_to_a_project_function_is_rewritten_on_the_portable_target(
    tmp_path: Path,
) -> None:
    result, _ = _migrate(tmp_path, Target.PORTABLE)
    assert (result / "train.py").read_text() == PORTABLE_TRAIN
    assert (
        "move(torch.ones(1), portable_device.device_type())" in (result / "pkg/run.py").read_text()
    )


def test_the_parameters_reaching_a_device_are_read_from_the_functions_asked_for() -> None:
    found = device_functions(UTILS.encode(), frozenset({"move", "place", "load", "label"}))
    assert sorted(found, key=lambda function: function.name) == [
        DeviceFunction("load", (1,), ("location",)),
        DeviceFunction("move", (1,), ("device",)),
        DeviceFunction("place", (1,), ("where",)),  # through a local name and move()
    ]
    assert device_functions(UTILS.encode(), frozenset({"place"})) == (
        DeviceFunction("place", (1,), ("where",)),
    )
    assert device_functions(UTILS.encode(), frozenset({"label", "absent"})) == ()
