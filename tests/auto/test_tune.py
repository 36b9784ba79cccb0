"""``ASCENDIFY_TUNE=safe``: the redirect applies migrate --tune's safe start lines on the NPU (run in
a child process under the npu stand-in, which records the options a program sets)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ascendify.auto._tune import ENV, apply_safe_tuning
from ascendify.errors import AscendifyError
from tests.conftest import HANG_BOUND, ascendify_env
from tests.npu_standin import standin_env

APPLY = """\
import json, sys
import torch_npu
from _npu_standin.emulation import OPTIONS
from ascendify.auto._tune import apply_safe_tuning

applied = apply_safe_tuning("npu", {"ASCENDIFY_TUNE": sys.argv[1]})
print(json.dumps({"applied": applied, "options": OPTIONS}))
"""


@pytest.mark.slow
def test_the_safe_set_sets_the_npu_options() -> None:
    outputs = []
    for wanted in ("safe", ""):
        done = subprocess.run(
            [sys.executable, "-c", APPLY, wanted], env=standin_env(ascendify_env()),
            capture_output=True, text=True, timeout=HANG_BOUND, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(json.loads(done.stdout))
    tuned, untouched = outputs
    assert tuned["options"] == {"jit_compile": False, "allow_internal_format": False}
    assert tuned["applied"] == [
        "torch_npu.npu.set_compile_mode(jit_compile=False)",
        "torch_npu.npu.config.allow_internal_format = False",
    ]
    assert untouched == {"applied": [], "options": {}}


def test_other_devices_are_left_alone_and_a_bad_value_is_refused() -> None:
    assert apply_safe_tuning("cpu", {ENV: "safe"}) == []
    assert apply_safe_tuning("cuda", {ENV: "safe"}) == []
    with pytest.raises(AscendifyError, match="ASCENDIFY_TUNE='fast'"):
        apply_safe_tuning("npu", {ENV: "fast"})
