"""ModelArts flavor strings -> cards per node: "Ascend: 8 | ARM: 192 cores 720 GB". Pure.

ModelArts shows a flavor as ``|``-separated parts, each ``KIND: DETAILS``. Accelerator parts
(``Ascend``, ``NPU``, ``GPU``) start with the card count, optionally followed by ``*MODEL``
("Ascend: 8*ascend-snt9b"); CPU parts (``ARM``, ``CPU``, ``x86``) give cores and memory, in
English or Chinese ("192 核 720 GB"). A flavor without an accelerator part runs one process
per node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACCELERATOR_KINDS = {"ascend": "Ascend", "npu": "Ascend", "gpu": "GPU"}
CPU_KINDS = ("arm", "cpu", "x86", "kunpeng")
_CARDS = re.compile(r"(\d+)\s*(?:\*\s*(\S.*))?")
_CORES = re.compile(r"(\d+)\s*(?:vcpus?|cores?|核)", re.IGNORECASE)
_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*(?:GB|GiB|G)\b", re.IGNORECASE)


# Flavors as ModelArts lists them (``ma-cli``'s flavor list: id and resources). Availability
# differs by region and pool; ``flavor`` takes the id or the resource string.
KNOWN_FLAVORS: tuple[tuple[str, str], ...] = (
    ("modelarts.kat1.xlarge", "Ascend: 1*ascend-d910(32GB) | ARM: 24 核 96GB"),
    ("modelarts.kat1.2xlarge", "Ascend: 2*ascend-d910(32GB) | ARM: 48 核 192GB"),
    ("modelarts.kat1.4xlarge", "Ascend: 4*ascend-d910(32GB) | ARM: 96 核 384GB"),
    ("modelarts.kat1.8xlarge", "Ascend: 8*ascend-d910(32GB) | ARM: 192 核 720GB"),
    ("modelarts.bm.npu.arm.8snt9b3.d", "Ascend: 8*ascend-snt9b3(64GB) | ARM: 192 核 1536GB"),
    ("modelarts.p3.large.public", "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 核 64GB"),
    ("modelarts.p3.4xlarge", "GPU: 4*NVIDIA-V100(32GB) | CPU: 32 核 256GB"),
    ("modelarts.p3.8xlarge", "GPU: 8*NVIDIA-V100(32GB) | CPU: 64 核 512GB"),
    ("modelarts.vm.cpu.8u", "CPU: 8 核 32GB"),
)


class FlavorError(ValueError):
    """The flavor string cannot be read; the message says which part and why."""


@dataclass(frozen=True)
class Flavor:
    accelerator: str | None  # "Ascend", "GPU", or None for a CPU-only flavor
    cards: int  # processes per node: the accelerator cards, 1 when there are none
    model: str | None = None  # "ascend-snt9b"
    cpu_arch: str | None = None
    cpu_cores: int | None = None
    memory_gb: float | None = None


def parse_flavor(text: str) -> Flavor:
    text = dict(KNOWN_FLAVORS).get(text.strip(), text)  # a flavor id
    accelerator: str | None = None
    cards, model = 1, None
    cpu_arch, cores, memory = None, None, None
    parts = [part.strip() for part in text.split("|") if part.strip()]
    if not parts:
        raise FlavorError("empty flavor; expected e.g. 'Ascend: 8 | ARM: 192 cores 720 GB'")
    for part in parts:
        kind, colon, details = part.partition(":")
        if not colon:
            raise FlavorError(f"part {part!r} is not 'KIND: DETAILS'")
        key = kind.strip().lower()
        if key in ACCELERATOR_KINDS:
            if accelerator is not None:
                raise FlavorError(f"two accelerator parts in {text!r}")
            accelerator = ACCELERATOR_KINDS[key]
            cards, model = _cards(part, details.strip())
        elif key in CPU_KINDS:
            cpu_arch = kind.strip()
            cores, memory = _cpu(part, details)
        else:
            known = ", ".join([*(k.capitalize() for k in ACCELERATOR_KINDS), "ARM", "CPU", "x86"])
            raise FlavorError(f"unknown resource {kind.strip()!r} in {part!r} (known: {known})")
    return Flavor(accelerator, cards, model, cpu_arch, cores, memory)


def _cards(part: str, details: str) -> tuple[int, str | None]:
    match = _CARDS.fullmatch(details)
    if match is None or int(match.group(1)) < 1:
        raise FlavorError(f"{part!r}: expected a card count of at least 1, e.g. 'Ascend: 8'")
    model = match.group(2).strip() if match.group(2) else None
    return int(match.group(1)), model


def _cpu(part: str, details: str) -> tuple[int, float | None]:
    cores = _CORES.search(details)
    if cores is None:
        raise FlavorError(f"{part!r}: expected a core count, e.g. 'ARM: 192 cores 720 GB'")
    memory = _MEMORY.search(details)
    return int(cores.group(1)), float(memory.group(1)) if memory else None
