"""Which device the job runs on, and the one line per job that says so."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import TextIO

from ascendify.errors import AscendifyError

DEVICE_VARIABLE = "ASCENDIFY_DEVICE"
ANNOUNCED_VARIABLE = "ASCENDIFY_AUTO_ANNOUNCED"  # inherited by child processes: one message per job
DEVICES = ("npu", "cuda", "cpu")

_REDIRECTS = {
    "npu": "cuda -> npu, nccl -> hccl",
    "cuda": "nothing redirected",
    "cpu": "cuda -> cpu, nccl -> gloo, CUDA events on the host clock, streams are no-ops; "
    "torch.cuda.is_available() stays False",
}


@dataclass(frozen=True)
class DeviceChoice:
    device: str  # "npu", "cuda" or "cpu"
    reason: str

    def announcement(self) -> str:
        return (
            f"ascendify.auto: running on {self.device.upper()} ({self.reason}); "
            f"{_REDIRECTS[self.device]}. Set {DEVICE_VARIABLE}=npu|cuda|cpu to choose."
        )


def choose_device(
    environ: MutableMapping[str, str],
    npu_count: Callable[[], int],
    cuda_count: Callable[[], int],
) -> DeviceChoice:
    """NPU when torch_npu sees one, else CUDA when present, else CPU; ``ASCENDIFY_DEVICE`` overrides."""
    forced = environ.get(DEVICE_VARIABLE, "").strip().lower()
    if forced and forced not in DEVICES:
        raise AscendifyError(
            f"{DEVICE_VARIABLE}={environ[DEVICE_VARIABLE]!r} is not a device; use one of {', '.join(DEVICES)}"
        )
    if forced == "cpu":
        return DeviceChoice("cpu", f"{DEVICE_VARIABLE}=cpu")
    if forced in ("", "npu"):
        npus = npu_count()
        if npus:
            return DeviceChoice("npu", f"{npus} NPU(s) visible")
        if forced:
            raise AscendifyError(
                f"{DEVICE_VARIABLE}=npu, but no NPU is usable: {_npu_problem()}; "
                "check the CANN environment (set_env.sh) and ASCEND_RT_VISIBLE_DEVICES"
            )
    cudas = cuda_count()
    if cudas:
        return DeviceChoice("cuda", f"{cudas} CUDA device(s) visible")
    if forced == "cuda":
        raise AscendifyError(f"{DEVICE_VARIABLE}=cuda, but torch sees no CUDA device")
    return DeviceChoice("cpu", f"no NPU ({_npu_problem()}) and no CUDA device")


def _npu_problem() -> str:
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu is not installed"
    return "torch_npu sees no device"


def announce(
    choice: DeviceChoice, environ: MutableMapping[str, str], stream: TextIO | None = None
) -> bool:
    """Print the choice once per job: on rank 0 only, and not again in processes it starts."""
    if environ.get(ANNOUNCED_VARIABLE) == "1":
        return False
    environ[ANNOUNCED_VARIABLE] = "1"
    rank = environ.get("RANK", environ.get("LOCAL_RANK", "0"))
    if rank.strip() != "0":
        return False
    print(choice.announcement(), file=stream or sys.stderr, flush=True)
    return True
