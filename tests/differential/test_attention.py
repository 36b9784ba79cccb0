"""flash-attn and xformers attention ported to torch_npu's fused attention, proven by running: the
migrated script under the npu stand-in prints what torch's own attention prints on the CPU.

``attention/attention_forms.py`` cannot run as written here (flash-attn and xformers need CUDA);
its ``--reference`` path computes each form with ``scaled_dot_product_attention`` on the CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "attention"
# Largest difference allowed per element: a float32 result agrees to its rounding, float16 and
# bfloat16 results to one unit in the last place of values up to 2.
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npu")
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(SCRIPTS), "-o", str(out),
         "-j", "1", "--no-analysis"],
        env=ascendify_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{SCRIPTS.name}_msft" / "attention_forms.py"


def _outputs(script: Path, *args: str) -> dict[str, dict[str, list[float]]]:
    done = subprocess.run(
        [sys.executable, str(script), *args], env=standin_env(ascendify_env()),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, dict[str, list[float]]] = json.loads(done.stdout)
    return result


@pytest.mark.slow
def test_no_flash_attn_or_xformers_is_left(migrated: Path) -> None:
    text = migrated.read_text(encoding="utf-8")
    for library in ("flash_attn", "xformers"):
        assert f"import {library}" not in text
        assert f"from {library}" not in text
    assert text.count("torch_npu.npu_fusion_attention(") == 8


@pytest.mark.slow
def test_each_form_prints_what_torch_attention_prints(migrated: Path) -> None:
    ported = _outputs(migrated)
    reference = _outputs(migrated, "--reference")
    assert ported.keys() == reference.keys() == TOLERANCE.keys()
    for dtype, forms in ported.items():
        assert forms.keys() == reference[dtype].keys()
        for form, values in forms.items():
            expected = reference[dtype][form]
            assert len(values) == len(expected), form
            worst = max(abs(a - b) for a, b in zip(values, expected, strict=True))
            assert worst <= TOLERANCE[dtype], (dtype, form, worst)
