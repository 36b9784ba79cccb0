"""The data generator, on a small wheel-shaped archive and on the real torch-npu wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from scripts.generate_torch_npu_data import OUTPUT_DIR, facts_from_wheel, module_public_names

OPS_YAML = """\
backend: NPU
custom:
- func: npu_fast_gelu(Tensor self) -> Tensor
supported:
- addmm
- addmm.out
- func: copy_
  op_api: true
symint:
- func: embedding(Tensor weight, Tensor indices) -> Tensor
"""


def make_wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "torch_npu-9.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "torch_npu-9.1.0.dist-info/METADATA",
            "Name: torch_npu\nVersion: 9.1.0\nRequires-Dist: torch==9.1.0.*\n",
        )
        archive.writestr(
            "torch_npu/npu/__init__.py",
            "__all__ = ['set_device', 'NPUGraph']\nfrom .random import *\n",
        )
        archive.writestr("torch_npu/npu/backends.py", "fft_plan_cache = 1\n_private = 2\n")
        archive.writestr(
            "torch_npu/npu/random.py",
            "__all__ = ['seed']\nfrom . import _lazy_call\ndef seed(): pass\n"
            "try:\n    _table: dict = {}\nexcept ImportError:\n    pass\n",
        )
        archive.writestr("torch_npu/npu/amp/__init__.py", "")
        archive.writestr(
            "torch_npu/npu/amp/common.py", "def amp_definitely_not_available(): pass\n"
        )
        archive.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", OPS_YAML)
    return wheel


def test_reads_names_ops_and_version_from_the_archive(tmp_path: Path) -> None:
    facts = facts_from_wheel(make_wheel(tmp_path))
    assert facts["torch_npu_version"] == "9.1.0"
    assert facts["torch_requirement"] == "torch==9.1.0.*"
    assert facts["public_names"]["torch_npu.npu"] == ["NPUGraph", "set_device"]
    assert facts["public_names"]["torch_npu.npu.backends"] == ["fft_plan_cache"]
    assert facts["aten_ops_with_npu_kernel"] == ["addmm", "addmm.out", "copy_", "embedding"]
    assert facts["npu_custom_ops"] == ["npu_fast_gelu"]


def test_every_bound_name_is_read_private_and_imported_ones_included(tmp_path: Path) -> None:
    names = facts_from_wheel(make_wheel(tmp_path))["module_names"]
    assert names["torch_npu.npu.random"] == ["_lazy_call", "_table", "seed"]
    assert names["torch_npu.npu.backends"] == ["_private", "fft_plan_cache"]
    # a package binds its submodules; a star import, the other module's public names
    assert names["torch_npu.npu.amp"] == ["common"]
    assert names["torch_npu.npu"] == ["amp", "backends", "random", "seed"]
    assert names["torch_npu.npu.amp.common"] == ["amp_definitely_not_available"]


def test_augmented_all_is_collected() -> None:
    assert module_public_names("__all__ = ['a']\n__all__ += ['b']\n") == ["a", "b"]


@pytest.mark.slow
@pytest.mark.network
def test_committed_data_matches_the_real_wheel(tmp_path: Path) -> None:
    download = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.11", "torch-npu==2.13.0", "-d", str(tmp_path)],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    if download.returncode != 0:
        pytest.skip(f"torch-npu wheel not reachable: {download.stderr.strip()[-200:]}")
    wheel = next(tmp_path.glob("torch_npu-2.13.0-*.whl"))
    committed = json.loads((OUTPUT_DIR / "torch_npu-2.13.0.json").read_text(encoding="utf-8"))
    regenerated = facts_from_wheel(wheel)
    assert regenerated["public_names"] == committed["public_names"]
    assert regenerated["module_names"] == committed["module_names"]
    assert "_lazy_call" in committed["module_names"]["torch_npu.npu"]
    assert regenerated["aten_ops_with_npu_kernel"] == committed["aten_ops_with_npu_kernel"]
    assert len(committed["aten_ops_with_npu_kernel"]) > 1000
