"""This node's accelerators and their device IPs, found without importing torch.

Ascend NPUs are counted from ``/dev/davinci<N>``, else ``npu-smi``; NVIDIA GPUs from the driver's
``/proc`` entries, else ``nvidia-smi``; ``ASCEND_RT_VISIBLE_DEVICES`` / ``CUDA_VISIBLE_DEVICES``
narrow the set as the runtimes do. Device IPs (for the HCCL rank table) come from a
``hccn.conf`` file or ``hccn_tool``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ascendify.device_tools import npu_smi_ids, tool_output
from ascendify.errors import AscendifyError
from ascendify.launch.ranktable import parse_hccn_conf
from ascendify.textfile import read_text

# The variable that narrows a process to some cards, by the kind of the cards.
VISIBLE_DEVICES = {"npu": "ASCEND_RT_VISIBLE_DEVICES", "cuda": "CUDA_VISIBLE_DEVICES"}


@dataclass(frozen=True)
class LocalDevices:
    """Device ids as the driver numbers them (the rank table's ``device_id``) and how we know."""

    kind: str  # "npu", "cuda" or "cpu"
    ids: tuple[str, ...]
    reason: str


def discover_devices(env: Mapping[str, str], root: Path = Path("/")) -> LocalDevices:
    """The accelerators of this node; one CPU slot when there are none."""
    npus = _davinci_ids(root / "dev") or npu_smi_ids(env)
    if npus:
        return _visible("npu", npus[0], npus[1], env.get(VISIBLE_DEVICES["npu"]))
    gpus = _nvidia_proc_ids(root / "proc") or _nvidia_smi_ids(env)
    if gpus:
        return _visible("cuda", gpus[0], gpus[1], env.get(VISIBLE_DEVICES["cuda"]))
    return LocalDevices("cpu", ("0",), "no Ascend or NVIDIA device found")


def _visible(kind: str, ids: list[str], found: str, mask: str | None) -> LocalDevices:
    if mask is None:
        return LocalDevices(kind, tuple(ids), found)
    variable = VISIBLE_DEVICES[kind]
    # Like the runtimes, read the list up to the first entry that is not a device id.
    chosen: list[str] = []
    for item in mask.split(","):
        if not item.strip().isdigit() or item.strip() not in ids:
            break
        chosen.append(item.strip())
    return LocalDevices(kind, tuple(chosen), f"{found}, {len(chosen)} visible through {variable}")


def _davinci_ids(dev: Path) -> tuple[list[str], str] | None:
    try:
        names = [entry.name for entry in dev.iterdir()]
    except OSError:
        return None
    ids = sorted((m.group(1) for n in names if (m := re.fullmatch(r"davinci(\d+)", n))), key=int)
    return (ids, f"{len(ids)} Ascend devices in {dev}/davinci<N>") if ids else None


def _nvidia_proc_ids(proc: Path) -> tuple[list[str], str] | None:
    gpus = proc / "driver" / "nvidia" / "gpus"
    try:
        count = sum(1 for _ in gpus.iterdir())
    except OSError:
        return None
    ids = [str(index) for index in range(count)]
    return (ids, f"{count} NVIDIA GPUs in {gpus}") if ids else None


def _nvidia_smi_ids(env: Mapping[str, str]) -> tuple[list[str], str] | None:
    output = tool_output(["nvidia-smi", "-L"], env)
    ids = re.findall(r"^GPU (\d+):", output or "", flags=re.MULTILINE)
    return (ids, f"{len(ids)} NVIDIA GPUs listed by nvidia-smi") if ids else None


def device_ips(
    env: Mapping[str, str], ids: tuple[str, ...], hccn_conf: Path | None, root: Path = Path("/")
) -> tuple[dict[str, str], str]:
    """Device IPs for ``ids`` and where they came from; empty when any one is unknown."""
    system_conf = root / "etc" / "hccn.conf"
    if hccn_conf is not None or system_conf.is_file():
        conf = hccn_conf or system_conf
        try:
            text = read_text(conf, "--hccn-conf" if hccn_conf else "device IP file")
        except FileNotFoundError:
            raise AscendifyError(f"--hccn-conf {conf} does not exist") from None
        addresses, source = parse_hccn_conf(text), str(conf)
    else:
        addresses, source = _hccn_tool_addresses(env, ids), "hccn_tool"
    if not ids or any(device not in addresses for device in ids):
        return {}, f"no device IPs for devices {','.join(ids)} ({source})"
    return {device: addresses[device] for device in ids}, source


def _hccn_tool_addresses(env: Mapping[str, str], ids: tuple[str, ...]) -> dict[str, str]:
    addresses: dict[str, str] = {}
    for device in ids:
        output = tool_output(["hccn_tool", "-i", device, "-ip", "-g"], env)
        match = re.search(r"ipaddr\s*:\s*(\S+)", output or "")
        if match is None:
            break
        addresses[device] = match.group(1)
    return addresses
