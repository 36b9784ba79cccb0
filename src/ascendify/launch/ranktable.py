"""HCCL rank tables: read the v0 template, v1.0 and v1.2; convert v0 to v1.0; write v1.0.

A rank table tells HCCL which device of which server carries which global rank. Platforms hand
one to the job (ModelArts writes the v0 template ``jobstart_hccl.json``, MindCluster writes v1.0
or v1.2); when none is given and device IPs are known, the launcher builds one. All scalar values
are strings in these formats, and we keep them so.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.limits import MAX_DEVICES_PER_SERVER
from ascendify.textfile import read_json

# Fields we understand; any other field of a server or device is carried through unchanged
# (v1.2 adds super_device_id, backup_device_ip, ports, host_ip ...).
_DEVICE_KEYS = ("device_id", "device_ip", "rank_id")
_SERVER_KEYS = ("server_id", "device")
_WHOLE_NUMBER = re.compile(r"[0-9]+")  # str.isdigit() also takes "²", which int() refuses


class RankTableError(AscendifyError):
    """A rank table we cannot use, with the reason."""


class RankTableNotReady(RankTableError):
    """The platform has not finished writing the table (``status`` is not ``completed``)."""


@dataclass(frozen=True)
class RankDevice:
    device_id: str
    rank_id: str
    device_ip: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RankServer:
    server_id: str
    devices: tuple[RankDevice, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    # v0 tables name each instance by its pod; ModelArts finds "this node" by that name.
    pod_name: str | None = None


@dataclass(frozen=True)
class RankTable:
    version: str
    servers: tuple[RankServer, ...]
    source_version: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def rank_size(self) -> int:
        return sum(len(server.devices) for server in self.servers)

    def find_server(self, *, server_id: str | None = None, pod_name: str | None = None) -> int:
        """Index of the server with this id or pod name; -1 when absent."""
        for index, server in enumerate(self.servers):
            if server_id is not None and server.server_id == server_id:
                return index
            if pod_name is not None and server.pod_name == pod_name:
                return index
        return -1


def parse_rank_table(data: Any) -> RankTable:
    """Parse any supported format (v0 template, v1.0, v1.2) into one model."""
    if not isinstance(data, Mapping):
        raise RankTableError("a rank table must be a JSON object")
    if "status" not in data:  # platforms write it first; a table without one is of another kind
        raise RankTableError("not a rank table: it has no 'status' field")
    status = str(data["status"])
    if status != "completed":
        raise RankTableNotReady(f"rank table status is {status!r}, not 'completed'")
    if "group_list" in data:
        return _parse_v0(data)
    version = str(data.get("version", ""))
    if version in ("1.0", "1.2") and "server_list" in data:
        return _parse_v1(data, version)
    if version == "2.0":
        raise RankTableError("rank table version 2.0 (rank_list form) is not supported")
    raise RankTableError(f"unknown rank table format (version {version or 'missing'!r})")


def _parse_v1(data: Mapping[str, Any], version: str) -> RankTable:
    servers = tuple(_parse_v1_server(entry) for entry in _list(data, "server_list"))
    _check_consistency(servers, data.get("server_count"))
    extra = {
        k: v
        for k, v in data.items()
        if k not in ("status", "version", "server_count", "server_list")
    }
    return RankTable(version=version, servers=servers, source_version=version, extra=extra)


def _check_consistency(servers: Sequence[RankServer], declared_count: object) -> None:
    """HCCL rejects these at start-up with far less helpful messages."""
    if declared_count is not None and str(declared_count) != str(len(servers)):
        raise RankTableError(
            f"server_count is {declared_count} but server_list has {len(servers)} servers"
        )
    ranks = sorted(int(device.rank_id) for server in servers for device in server.devices)
    if not ranks or ranks != list(range(len(ranks))):
        raise RankTableError(f"rank ids {ranks} are not 0..{len(ranks) - 1}, each once")


def _parse_v1_server(entry: Any) -> RankServer:
    if not isinstance(entry, Mapping) or "server_id" not in entry:
        raise RankTableError("every server_list entry needs a server_id")
    server_id = str(entry["server_id"])
    listed = _list(entry, "device")
    _check_device_count(len(listed), server_id)
    devices = tuple(
        RankDevice(
            device_id=_device_id(device, server_id),
            rank_id=_whole_number(device, "rank_id"),
            device_ip=_optional_string(device, "device_ip"),
            extra={k: v for k, v in device.items() if k not in _DEVICE_KEYS},
        )
        for device in listed
    )
    _check_devices(devices, server_id)
    extra = {k: v for k, v in entry.items() if k not in _SERVER_KEYS}
    return RankServer(server_id=server_id, devices=devices, extra=extra)


def _check_device_count(count: int, server_id: str) -> None:
    if count > MAX_DEVICES_PER_SERVER:
        raise RankTableError(
            f"server {server_id} lists {count} devices; a server holds at most "
            f"{MAX_DEVICES_PER_SERVER}"
        )


def _check_devices(devices: Sequence[RankDevice], server_id: str) -> None:
    """At most one rank per device, and no more devices than a server holds."""
    _check_device_count(len(devices), server_id)
    seen: set[str] = set()
    for device in devices:
        if device.device_id in seen:
            raise RankTableError(
                f"rank table field 'device_id' of server {server_id}: device {device.device_id} "
                "is listed twice"
            )
        seen.add(device.device_id)


def _parse_v0(data: Mapping[str, Any]) -> RankTable:
    """The platform template, converted as ModelArts' own launcher does.

    Instances are sorted by the number after the last ``-`` of their pod name, ranks are numbered
    instance by instance in device order, and instances on one server share one server entry.
    """
    groups = [g for g in _list(data, "group_list") if str(g.get("device_count", "1")) != "0"]
    if len(groups) != 1:
        raise RankTableError(f"a v0 rank table must have one non-empty group, found {len(groups)}")
    instances = sorted(_list(groups[0], "instance_list"), key=_pod_index)
    by_server: dict[str, RankServer] = {}
    next_rank = 0
    for instance in instances:
        server_id = _string(instance, "server_id")
        devices = []
        for device in _list(instance, "devices"):
            devices.append(
                RankDevice(
                    device_id=_device_id(device, server_id),
                    rank_id=str(next_rank),
                    device_ip=_optional_string(device, "device_ip"),
                )
            )
            next_rank += 1
        previous = by_server.get(server_id)
        if previous is None:
            by_server[server_id] = RankServer(
                server_id, tuple(devices), pod_name=_optional_string(instance, "pod_name")
            )
        else:
            by_server[server_id] = replace(previous, devices=previous.devices + tuple(devices))
        _check_devices(by_server[server_id].devices, server_id)
    return RankTable(version="1.0", servers=tuple(by_server.values()), source_version="0")


def _pod_index(instance: Mapping[str, Any]) -> int:
    match = re.search(r"-(\d+)$", str(instance.get("pod_name", "")))
    return int(match.group(1)) if match else 0


def to_json(table: RankTable) -> dict[str, Any]:
    """The table as HCCL reads it (v1.0, or v1.2 with its extra fields kept)."""
    servers = []
    for server in table.servers:
        devices = []
        for device in server.devices:
            entry: dict[str, Any] = {"device_id": device.device_id}
            if device.device_ip is not None:
                entry["device_ip"] = device.device_ip
            entry["rank_id"] = device.rank_id
            entry.update(device.extra)
            devices.append(entry)
        servers.append({"server_id": server.server_id, **server.extra, "device": devices})
    return {
        "status": "completed",
        "version": table.version,
        "server_count": str(len(table.servers)),
        "server_list": servers,
        **table.extra,
    }


def assemble(servers: Sequence[tuple[str, Sequence[tuple[str, str | None]]]]) -> RankTable:
    """A v1.0 table from ``(server_id, [(device_id, device_ip), ...])`` in node-rank order.

    Ranks are numbered server by server, devices in the given order.
    """
    built = []
    next_rank = 0
    for server_id, devices in servers:
        entries = []
        for device_id, device_ip in devices:
            entries.append(
                RankDevice(device_id=device_id, rank_id=str(next_rank), device_ip=device_ip)
            )
            next_rank += 1
        built.append(RankServer(server_id=server_id, devices=tuple(entries)))
    return RankTable(version="1.0", servers=tuple(built), source_version="1.0")


def load_rank_table(path: Path) -> RankTable:
    """The table in ``path``, read once within the input limits (FIFOs, ``/dev/zero``, nesting).

    FileNotFoundError, json.JSONDecodeError and :class:`RankTableNotReady` pass: the platform may
    not have finished the file yet.
    """
    data = read_json(path, "rank table", RankTableError)
    try:
        return parse_rank_table(data)
    except RankTableError as error:  # the same kind (not ready, or not usable), naming the file
        raise type(error)(f"rank table {path}: {error}") from None


def read_rank_table(path: Path, timeout: float, poll: float = 1.0) -> RankTable:
    """Read a table file, waiting up to ``timeout`` seconds for the platform to complete it."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return load_rank_table(path)
        except FileNotFoundError:
            problem = f"rank table {path} does not exist"
        except json.JSONDecodeError as error:
            # The platform may be half-way through writing the file.
            problem = f"rank table {path} is not valid JSON yet ({error})"
        except RankTableNotReady as error:
            problem = str(error)
        if time.monotonic() >= deadline:
            raise RankTableError(f"{problem} after waiting {timeout:g}s")
        time.sleep(poll)


def parse_hccn_conf(text: str) -> dict[str, str]:
    """Device IPs from an ``/etc/hccn.conf`` text: ``address_<device id>=<ip>`` lines."""
    addresses: dict[str, str] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"\s*address_(\d+)\s*=\s*(\S+)\s*", line)
        if match:
            addresses[match.group(1)] = match.group(2)
    return addresses


def _list(data: Mapping[str, Any], key: str) -> Sequence[Mapping[str, Any]]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise RankTableError(f"rank table field {key!r} must be a list of objects")
    return value


def _string(data: Mapping[str, Any], key: str) -> str:
    if key not in data:
        raise RankTableError(f"rank table entry lacks {key!r}: {dict(data)}")
    return str(data[key])


def _whole_number(data: Mapping[str, Any], key: str) -> str:
    value = _string(data, key)
    if not _WHOLE_NUMBER.fullmatch(value):
        raise RankTableError(f"{key} must be a whole number, got {value!r}")
    return value


def _device_id(device: Mapping[str, Any], server_id: str) -> str:
    """A device number a server can have: 0 up to :data:`MAX_DEVICES_PER_SERVER` - 1."""
    device_id = _string(device, "device_id")
    if not _WHOLE_NUMBER.fullmatch(device_id) or int(device_id) >= MAX_DEVICES_PER_SERVER:
        raise RankTableError(
            f"rank table field 'device_id' of server {server_id}: {device_id!r} is not a device "
            f"number (0..{MAX_DEVICES_PER_SERVER - 1})"
        )
    return device_id


def _optional_string(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)
