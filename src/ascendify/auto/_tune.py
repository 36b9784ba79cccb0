"""``ASCENDIFY_TUNE=safe``: on the NPU the redirect also applies the start lines of ``migrate --tune``'s
safe set (TUN001 ``set_compile_mode(jit_compile=False)``, TUN002 ``allow_internal_format = False``),
which change how operators are built and laid out, never what they compute. Opt-in, as ``--tune``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ascendify.auto._resolve import resolve_owner
from ascendify.errors import AscendifyError
from ascendify.targets.tuning import ALLOW_INTERNAL_FORMAT, SET_COMPILE_MODE

ENV = "ASCENDIFY_TUNE"
SAFE = "safe"


def apply_safe_tuning(device: str, environ: Mapping[str, str]) -> list[str]:
    """Apply the safe tuning when ``environ`` opts in and the device is the NPU; what was applied."""
    wanted = environ.get(ENV, "")
    if wanted not in ("", SAFE):
        raise AscendifyError(f"{ENV}={wanted!r}: use {SAFE} to apply the safe tuning, or unset it")
    if wanted != SAFE or device != "npu":
        return []
    owner, name = resolve_owner(SET_COMPILE_MODE)
    getattr(owner, name)(jit_compile=False)
    owner, name = resolve_owner(ALLOW_INTERNAL_FORMAT, absent_ok=True)  # a setter-only option
    setattr(owner, name, False)
    return [f"{SET_COMPILE_MODE}(jit_compile=False)", f"{ALLOW_INTERNAL_FORMAT} = False"]
