"""flash-attn and xformers attention ported to torch_npu's fused attention (and, for the portable
target, to torch's attention), proven by running: the migrated script (the NPU one under the npu
stand-in) prints what torch's own attention prints on the CPU.

``attention/attention_forms.py`` cannot run as written here (flash-attn and xformers need CUDA);
its ``--reference`` path computes each form with ``scaled_dot_product_attention`` on the CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, ascendify_env
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "attention"
# Largest difference allowed per element: a float32 result agrees to its rounding, float16 and
# bfloat16 results to one unit in the last place of values up to 2.
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def _migrate(out: Path, *options: str) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(SCRIPTS), "-o", str(out),
         "-j", "1", "--no-analysis", *options],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{SCRIPTS.name}_msft" / "attention_forms.py"


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _migrate(tmp_path_factory.mktemp("npu"))


def _outputs(script: Path, *args: str, standin: bool = True) -> dict[str, dict[str, list[float]]]:
    done = subprocess.run(
        [sys.executable, str(script), *args],
        env=standin_env(ascendify_env()) if standin else ascendify_env(),
        capture_output=True, text=True, timeout=HANG_BOUND, check=False,
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
    assert text.count("torch_npu.npu_fusion_attention(") == 9


def _assert_close(
    ported: dict[str, dict[str, list[float]]], reference: dict[str, dict[str, list[float]]]
) -> None:
    assert ported.keys() == reference.keys() == TOLERANCE.keys()
    for dtype, forms in ported.items():
        assert forms.keys() == reference[dtype].keys()
        for form, values in forms.items():
            expected = reference[dtype][form]
            assert len(values) == len(expected), form
            worst = max(abs(a - b) for a, b in zip(values, expected, strict=True))
            assert worst <= TOLERANCE[dtype], (dtype, form, worst)


@pytest.mark.slow
def test_each_form_prints_what_torch_attention_prints(migrated: Path) -> None:
    _assert_close(_outputs(migrated), _outputs(migrated, "--reference"))


@pytest.mark.slow
def test_the_portable_forms_print_what_torch_attention_prints(tmp_path: Path) -> None:
    script = _migrate(tmp_path, "--target", "portable")
    text = script.read_text(encoding="utf-8")
    assert "import xformers" not in text
    assert text.count("scaled_dot_product_attention(") == 9  # 8 ported, 1 the reference's own
    ported = _outputs(script, "--portable", standin=False)
    _assert_close(ported, _outputs(script, "--portable", "--reference", standin=False))
