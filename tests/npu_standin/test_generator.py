"""The stand-in generator, on a small wheel-shaped archive and on the real torch-npu wheel."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest
from scripts.generate_npu_standin import (
    DEFAULT_VERSION,
    OUTPUT_DIR,
    api_from_wheel,
    write_standin,
)
from scripts.generate_torch_npu_data import download_wheel

NPU_INIT = """\
__all__ = ["set_device", "Event", "Stream", "Timer", "seed", "config"]
from .utils import set_device
from .streams import *
from ._helpers import make_config as _make_config
config = _make_config()
def seed(value, /, *rest, deterministic=False, **options):
    pass
"""
OPS_YAML = """\
custom:
- func: npu_a_(Tensor(a!) self) -> Tensor(a!)
- func: npu_b(Tensor self, int k=2) -> Tensor
- func: npu_b.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
- func: npu_internal(Tensor self) -> Tensor
"""
STREAMS = """\
class _Base(object):
    DEFAULT_PRIORITY = 0
    def __init__(self, device=None, priority=0):
        pass
    def query(self):
        return True
class Stream(_Base):
    def wait_event(self, event):
        pass
class Event(object):
    def __new__(cls, enable_timing=False):
        return super().__new__(cls)
    @staticmethod
    def now(stream=None):
        pass
    @property
    def handle(self):
        return 0
class Timer(external.Base):
    pass
"""


def make_wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "torch_npu-9.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("torch_npu-9.1.0.dist-info/METADATA", "Name: torch_npu\nVersion: 9.1.0\n")
        archive.writestr("torch_npu/__init__.py", "__all__ = []\n")
        archive.writestr(
            "torch_npu/utils/exposed_api.py", "public_npu_functions = ['npu_b', 'npu_a_']\n"
        )
        archive.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", OPS_YAML)
        archive.writestr("torch_npu/npu/__init__.py", NPU_INIT)
        archive.writestr("torch_npu/npu/utils.py", "def set_device(device):\n    pass\n")
        archive.writestr("torch_npu/npu/streams.py", STREAMS)
    return wheel


def test_reads_names_signatures_and_where_each_is_defined(tmp_path: Path) -> None:
    api = api_from_wheel(make_wheel(tmp_path))
    assert api["torch_npu_version"] == "9.1.0"
    assert list(api["modules"]) == [
        "torch_npu",
        "torch_npu.npu",
        "torch_npu.npu.streams",
        "torch_npu.npu.utils",
    ]
    root = api["modules"]["torch_npu"]["names"]
    assert root == {
        "npu": {"kind": "module", "module": "torch_npu.npu"},
        "npu_a_": {"kind": "operator", "overloads": [[["self", "POSITIONAL_OR_KEYWORD", None]]]},
        "npu_b": {
            "kind": "operator",
            "overloads": [
                [["self", "POSITIONAL_OR_KEYWORD", None], ["k", "POSITIONAL_OR_KEYWORD", "2"]],
                [["self", "POSITIONAL_OR_KEYWORD", None], ["out", "KEYWORD_ONLY", None]],
            ],
        },
    }
    npu = api["modules"]["torch_npu.npu"]["names"]
    assert npu["set_device"] == {
        "kind": "function",
        "defined_in": "torch_npu.npu.utils.set_device",
        "signature": [["device", "POSITIONAL_OR_KEYWORD", None]],
    }
    assert npu["seed"]["signature"] == [
        ["value", "POSITIONAL_ONLY", None],
        ["rest", "VAR_POSITIONAL", None],
        ["deterministic", "KEYWORD_ONLY", "False"],
        ["options", "VAR_KEYWORD", None],
    ]
    assert npu["config"] == {"kind": "object", "value": "_make_config()"}
    assert npu["utils"] == {"kind": "module", "module": "torch_npu.npu.utils"}


def test_classes_take_their_constructor_and_methods_from_the_source(tmp_path: Path) -> None:
    npu = api_from_wheel(make_wheel(tmp_path))["modules"]["torch_npu.npu"]["names"]
    device_and_priority = [
        ["device", "POSITIONAL_OR_KEYWORD", "None"],
        ["priority", "POSITIONAL_OR_KEYWORD", "0"],
    ]
    assert npu["Stream"] == {
        "kind": "class",
        "defined_in": "torch_npu.npu.streams.Stream",
        "signature": device_and_priority,
        "methods": {"query": [], "wait_event": [["event", "POSITIONAL_OR_KEYWORD", None]]},
        "attributes": ["DEFAULT_PRIORITY"],
    }
    assert npu["Event"]["signature"] == [["enable_timing", "POSITIONAL_OR_KEYWORD", "False"]]
    assert npu["Event"]["methods"] == {"now": [["stream", "POSITIONAL_OR_KEYWORD", "None"]]}
    assert npu["Event"]["attributes"] == ["handle"]  # a property is read as an attribute
    assert npu["Timer"]["signature"] is None  # its base is not in the wheel: unknown, unchecked


def test_writes_one_module_file_per_module_and_the_description(tmp_path: Path) -> None:
    output = tmp_path / "site" / "torch_npu"
    (output / "stale").mkdir(parents=True)
    written = write_standin(api_from_wheel(make_wheel(tmp_path)), output)
    assert sorted(p.relative_to(output).as_posix() for p in written) == [
        "__init__.py",
        "_standin_api.json",
        "npu/__init__.py",
        "npu/streams.py",
        "npu/utils.py",
    ]
    assert not (output / "stale").exists()
    assert "install(__name__)" in (output / "npu" / "utils.py").read_text(encoding="utf-8")


def tree(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.mark.slow
@pytest.mark.network
def test_committed_standin_matches_the_real_wheel(tmp_path: Path) -> None:
    try:
        wheel = download_wheel(DEFAULT_VERSION, tmp_path)
    except subprocess.CalledProcessError as error:
        pytest.skip(f"torch-npu wheel not reachable: {error}")
    regenerated = tmp_path / "torch_npu"
    write_standin(api_from_wheel(wheel), regenerated)
    assert tree(regenerated) == tree(OUTPUT_DIR)
    assert len(tree(OUTPUT_DIR)) > 10
