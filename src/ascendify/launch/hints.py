"""What to do about a failed rank, recognised from the end of its log: data plus one function.

Each hint has a stable code, the texts that identify the failure and the advice. Only failures
with one clear cause and one clear remedy are listed; the launcher shows at most one hint.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Hint:
    code: str
    markers: tuple[str, ...]  # any one of them, found in the last lines of the rank's log
    message: str  # ``{auto}`` becomes the command line that runs the job under the redirect


HINTS = (
    Hint(
        "RUN001",
        (
            "Distributed package doesn't have NCCL built in",
            "ProcessGroupNCCL is only supported with GPUs",
            "Torch not compiled with CUDA enabled",
            "Found no NVIDIA driver on your system",
            "No CUDA GPUs are available",
        ),
        "this is a CUDA/NCCL script and this machine has no NVIDIA GPU for it: run it through "
        "the runtime redirect, `{auto}` (with the same launcher flags), or migrate it once with "
        "`ascendify migrate -i SRC -o OUT`",
    ),
)


def hint_for(lines: Sequence[str], argv: Sequence[str]) -> str | None:
    """The advice for a rank that printed ``lines`` last and ran ``argv``, or None."""
    text = "\n".join(lines)
    for hint in HINTS:
        if any(marker in text for marker in hint.markers):
            return f"{hint.code}: {hint.message.format(auto=_under_redirect(argv))}"
    return None


def _under_redirect(argv: Sequence[str]) -> str:
    """``ascendify run python -m ascendify.auto train.py ...`` for ``python train.py ...``."""
    if len(argv) > 1 and "python" in argv[0].rsplit("/", 1)[-1] and argv[1] != "-c":
        return shlex.join(("ascendify", "run", argv[0], "-m", "ascendify.auto", *argv[1:]))
    return "ascendify run python -m ascendify.auto SCRIPT ARGS..."
