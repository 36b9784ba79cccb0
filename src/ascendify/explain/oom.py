"""Out-of-memory messages read into numbers, and whether fragmentation explains them.

torch_npu prints ``NPU out of memory. Tried to allocate 22.00 MiB (NPU 0; 60.97 GiB total
capacity; 10.24 GiB already allocated; 10.24 GiB current active; 19.52 MiB free; 10.65 GiB reserved
in total by PyTorch)``; torch's CUDA/HIP allocator ``CUDA out of memory. Tried to allocate 20.00
MiB. GPU 0 has a total capacity of 4.00 GiB of which 2.35 GiB is free. ... Of the allocated memory
825.15 MiB is allocated by PyTorch, and 24.85 MiB is reserved by PyTorch but unallocated.``

Fragmentation: memory the allocator reserved but does not use (reserved - allocated) is larger
than the request AND a real share of the card (:data:`FRAGMENTED_SHARE`), so the request failed for
want of one contiguous block. The cure is the expandable-segments allocator setting of that device.
Otherwise the program needs less memory, and that setting cannot help: a card over 95 % allocated
with a few hundred MiB reserved but unused is full, not fragmented, and a single request larger than
the whole card (an eager attention matrix of a long sequence, a huge logits tensor) fails on any
allocator.

Held elsewhere: the card has no room, yet this process's allocator holds well under half of it
(:data:`HELD_ELSEWHERE_SHARE`): the memory is another process's, or the runtime's own (a serving
engine's graphs, the collectives' buffers, a runtime release that leaks), and a smaller batch does
not get it back.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

_SIZE = r"([\d.]+) ?([KMGTP]i?B|bytes)"
_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}
_UNITS.update({"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "PB": 2**50})

_DEVICE = re.compile(r"\b(NPU|CUDA|HIP) out of memory\. Tried to allocate " + _SIZE)
_FIELDS = {
    "total": re.compile(_SIZE + r" total capacity"),
    "allocated": re.compile(_SIZE + r" already allocated"),
    "free": re.compile(_SIZE + r" free;"),
    "reserved": re.compile(_SIZE + r" reserved in total by PyTorch"),
}
_CUDA_FIELDS = {
    "total": re.compile(r"total capacity of " + _SIZE),
    "free": re.compile(r"of which " + _SIZE + r" is free"),
    "allocated": re.compile(_SIZE + r" is allocated by PyTorch"),
    "unallocated": re.compile(_SIZE + r" is reserved by PyTorch but unallocated"),
}
FRAGMENTED_SHARE = 0.05  # of the card's capacity, reserved but unused, before fragmentation counts
# of the card's capacity, reserved here or free, below which the rest is held elsewhere
HELD_ELSEWHERE_SHARE = 0.5
LESS_MEMORY = (
    "lower the batch size, sequence length or input (image) size, train in mixed precision "
    "(fp16/bf16), turn on activation (gradient) checkpointing, offload "
    "optimizer state or parameters to the CPU (ZeRO/FSDP offload), shard the model over more cards, "
    "and use flash attention where an eager attention matrix is built (torch_npu."
    "npu_fusion_attention on an NPU, sdpa elsewhere); a serving engine: a lower "
    "memory share (--gpu-memory-utilization in vLLM, --mem-fraction-static in SGLang), a shorter "
    "--max-model-len, fewer running requests or a quantized model"
)
RUNTIMES = {
    "NPU": ("npu-smi info", "CANN"),
    "CUDA": ("nvidia-smi", "CUDA driver"),
    "HIP": ("rocm-smi", "ROCm"),
}
SETTINGS = {
    "NPU": "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
    "CUDA": "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "HIP": "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
}


@dataclass(frozen=True)
class OutOfMemory:
    device: str  # NPU, CUDA or HIP
    requested: int  # bytes
    total: int | None
    allocated: int | None
    reserved: int | None
    free: int | None

    @property
    def unallocated(self) -> int | None:
        """Reserved by the allocator but not handed out."""
        if self.reserved is None or self.allocated is None:
            return None
        return max(0, self.reserved - self.allocated)

    @property
    def fragmented(self) -> bool:
        unused = self.unallocated
        if unused is None or unused <= self.requested:
            return False
        return self.total is None or unused >= FRAGMENTED_SHARE * self.total

    @property
    def larger_than_card(self) -> bool:
        return self.total is not None and self.requested > self.total

    @property
    def held_elsewhere(self) -> int | None:
        """Bytes of the card neither reserved by this allocator nor free, when that is most of
        a card that has no room for the request; None otherwise."""
        if self.total is None or self.reserved is None or self.free is None:
            return None
        if self.free >= self.requested:
            return None
        if self.reserved + self.free >= HELD_ELSEWHERE_SHARE * self.total:
            return None
        return self.total - self.reserved - self.free

    @property
    def setting(self) -> str:
        return SETTINGS[self.device]

    def advice(self) -> str:
        if self.fragmented:
            return (
                f"fragmentation: {_size(self.unallocated)} reserved but unallocated is more than "
                f"the {_size(self.requested)} asked for; set {self.setting}"
            )
        elsewhere = self.held_elsewhere
        if elsewhere is not None:
            lister, runtime = RUNTIMES[self.device]
            return (
                f"{_size(elsewhere)} of the card's {_size(self.total)} is held outside this "
                f"process's allocator ({_size(self.reserved)} reserved here, {_size(self.free)} "
                f"free): find the other processes on the card ({lister}) and stop them or use a "
                f"free card; where none holds it, the runtime does (a serving engine's graphs or "
                f"cache, the collectives' buffers): check the {runtime} version against the one "
                f"the framework was validated with, and where it began with an upgrade go back "
                f"to the previous {runtime} release"
            )
        if self.larger_than_card:
            return (
                f"one request of {_size(self.requested)} is larger than the whole card "
                f"({_size(self.total)}): no allocator setting helps; {LESS_MEMORY}"
            )
        return (
            f"the card is full: {_size(self.requested)} asked, {_size(self.free)} free of "
            f"{_size(self.total)}; {LESS_MEMORY} ({self.setting} helps only when a real share of "
            f"the card sits reserved but unused)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "unallocated": self.unallocated,
            "fragmented": self.fragmented,
            "held_elsewhere": self.held_elsewhere,
            "setting": self.setting,
            "advice": self.advice(),
        }


def parse(line: str) -> OutOfMemory | None:
    """The numbers of an out-of-memory line, or None when ``line`` is not one."""
    head = _DEVICE.search(line)
    if head is None:
        return None
    device = head.group(1)
    requested = _bytes(head.group(2), head.group(3))
    if device == "NPU":
        found = {name: _find(pattern, line) for name, pattern in _FIELDS.items()}
        return OutOfMemory(device, requested, **found)
    found = {name: _find(pattern, line) for name, pattern in _CUDA_FIELDS.items()}
    unallocated = found.pop("unallocated")
    allocated = found["allocated"]
    reserved = (
        allocated + unallocated if allocated is not None and unallocated is not None else None
    )
    return OutOfMemory(device, requested, found["total"], allocated, reserved, found["free"])


def _find(pattern: re.Pattern[str], line: str) -> int | None:
    match = pattern.search(line)
    return _bytes(match.group(1), match.group(2)) if match else None


def _bytes(number: str, unit: str) -> int:
    return int(float(number) * _UNITS[unit])


def _size(value: int | None) -> str:
    if value is None:
        return "?"
    for unit in ("GiB", "MiB", "KiB"):
        if value >= _UNITS[unit]:
            return f"{value / _UNITS[unit]:.2f} {unit}"
    return f"{value} bytes"
