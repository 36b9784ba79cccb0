"""Resolve options + platform environment + this machine into a :class:`LaunchSpec`.

Precedence for every fact: flag > platform variable (see :mod:`ascendify.launch.platforms`) >
platform rank table > default. This step reads the machine (devices, rank-table files) but
starts nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ascendify.errors import AscendifyError
from ascendify.launch.devices import LocalDevices, device_ips, discover_devices
from ascendify.launch.launchers import Topology, nested_launcher, recognise
from ascendify.launch.options import LaunchOptions, check
from ascendify.launch.platforms import Detected, detect_platform
from ascendify.launch.ranktable import RankServer, RankTable, read_rank_table
from ascendify.launch.spec import LaunchSpec
from ascendify.limits import MAX_DEVICES_PER_SERVER
from ascendify.userdirs import cache_dir

DEFAULT_MASTER_PORT = 29500  # torchrun's; multi-node jobs need one port every node agrees on
_V0_FILE = "jobstart_hccl.json"


class _Facts:
    """Each topology fact from its flag, else the platform; remembers where each came from."""

    def __init__(self, detected: Detected) -> None:
        self.detected = detected
        self.origins: dict[str, str] = {}

    def get(self, name: str, flag: object) -> str | None:
        if flag is not None:
            self.origins[name] = "flag"
            return str(flag)
        if name in self.detected.facts:
            self.origins[name] = f"{self.detected.platform}: {self.detected.origins[name]}"
            return self.detected.facts[name]
        return None

    def given(self, name: str) -> bool:
        return name in self.origins


@dataclass(frozen=True)
class _Place:
    """Where this node sits in the job."""

    nnodes: int
    node_rank: int
    local_addr: str | None
    table: RankTable | None = None
    table_path: Path | None = None
    server_index: int = 0


def resolve_spec(
    options: LaunchOptions, env: Mapping[str, str] | None = None, root: Path = Path("/")
) -> LaunchSpec:
    """The spec for this node; ``env`` defaults to the current environment."""
    env = dict(os.environ if env is None else env)
    check(options)
    facts = _Facts(detect_platform(env))
    nested = None if options.module or options.verbatim else recognise(options.command)
    command = _command(options, env) if nested is None else options.command
    place = _place(options, env, facts)
    server = place.table.servers[place.server_index] if place.table else None
    requested = facts.get("nproc_per_node", options.nproc_per_node)
    nproc, devices, ips, kind = _devices(
        options, env, root, requested=requested, server=server, origins=facts.origins
    )
    master_addr, master_port = _master(options, facts, place)
    cwd = _cwd(options, env)
    launcher = None
    if nested is not None:
        topology = Topology(nproc, place.nnodes, place.node_rank, master_addr, master_port, devices)
        launcher = nested_launcher(*nested, topology, str(cwd))
        command = launcher.command
    job_id = facts.get("job_id", options.job_id) or (
        f"ascendify-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    )
    return LaunchSpec(
        command=command,
        nproc_per_node=nproc,
        devices=devices,
        device_ips=ips,
        nnodes=place.nnodes,
        node_rank=place.node_rank,
        master_addr=master_addr,
        master_port=master_port,
        local_addr=place.local_addr or _own_address(),
        job_id=job_id,
        cwd=cwd,
        log_dir=_log_dir(options, env),
        tee=options.tee,
        local_ranks_filter=options.local_ranks_filter,
        grace_period=options.grace_period,
        join_timeout=options.join_timeout,
        platform=facts.detected.platform,
        platform_reason=facts.detected.reason,
        env=env,
        rank_table=place.table,
        rank_table_path=place.table_path,
        server_index=place.server_index,
        origins=facts.origins,
        inputs=options.inputs,
        outputs=options.outputs,
        upload_interval=options.upload_interval,
        staging_dir=_staging_dir(options, env, cwd),
        max_restarts=options.max_restarts,
        hang_timeout=options.hang_timeout,
        resume_from_latest=options.resume_from_latest,
        device_kind=kind,
        launcher=launcher,
        min_nnodes=_least_nodes(options, place),
    )


def _least_nodes(options: LaunchOptions, place: _Place) -> int:
    """``MIN`` of ``--nnodes MIN:MAX`` (0 for a fixed count)."""
    least = options.min_nnodes
    if least is None or least == place.nnodes:
        return 0
    if not 1 <= least <= place.nnodes:
        raise AscendifyError(f"--nnodes {least}:{place.nnodes}: MIN must be from 1 to MAX")
    if place.table is not None:
        raise AscendifyError(
            f"--nnodes {least}:{place.nnodes}: a platform rank table fixes the nodes; give N"
        )
    return least


def _place(options: LaunchOptions, env: Mapping[str, str], facts: _Facts) -> _Place:
    """Node count, node rank and address: flags, else platform, else the platform's rank table."""
    nnodes = _int("nnodes", facts.get("nnodes", options.nnodes), 1)
    if nnodes < 1:
        raise AscendifyError(f"--nnodes must be at least 1, got {nnodes}{_origin(facts, 'nnodes')}")
    node_rank = _int("node rank", facts.get("node_rank", options.node_rank), 0)
    local_addr = facts.get("local_addr", options.local_addr)
    platform_table = _platform_rank_table(env, options.join_timeout)
    place = _Place(nnodes, node_rank, local_addr)
    if platform_table is not None:
        table, path = platform_table
        known_rank = node_rank if facts.given("node_rank") else None
        server = _current_server(table, env, local_addr, known_rank)
        index = table.servers.index(server)
        if not facts.given("nnodes"):
            nnodes, facts.origins["nnodes"] = len(table.servers), "platform rank table"
        if not facts.given("node_rank"):
            node_rank, facts.origins["node_rank"] = index, "platform rank table"
        place = _Place(nnodes, node_rank, local_addr or server.server_id, table, path, index)
    if not 0 <= place.node_rank < place.nnodes:
        raise AscendifyError(
            f"node rank {place.node_rank} is outside 0..{place.nnodes - 1} ({place.nnodes} nodes)"
        )
    return place


def _master(options: LaunchOptions, facts: _Facts, place: _Place) -> tuple[str, int | None]:
    port = facts.get("master_port", options.master_port)
    multi_node = place.nnodes > 1
    master_port = DEFAULT_MASTER_PORT if multi_node else None
    if port is not None:
        master_port = _int("--master-port", port, 0)
        if not 1 <= master_port <= 65535:
            raise AscendifyError(
                f"--master-port must be a TCP port, 1-65535, got {port}"
                f"{_origin(facts, 'master_port')}"
            )
    master_addr = facts.get("master_addr", options.master_addr)
    if master_addr is not None:
        return master_addr, master_port
    if not multi_node:
        master_addr = "127.0.0.1"
    elif place.table is not None:
        master_addr = place.table.servers[0].server_id
    else:
        raise AscendifyError(
            "a multi-node job needs --master-addr (or a platform that names the master)"
        )
    facts.origins["master_addr"] = "default" if not multi_node else "platform rank table"
    return master_addr, master_port


def _origin(facts: _Facts, name: str) -> str:
    """`` (from MA_NUM_HOSTS)`` when a platform variable, not a flag, gave the value."""
    origin = facts.origins.get(name, "flag")
    return "" if origin == "flag" else f" (from {origin})"


def _int(what: str, value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise AscendifyError(f"{what} must be a whole number, got {value!r}") from None


def _command(options: LaunchOptions, env: Mapping[str, str]) -> tuple[str, ...]:
    if not options.command:
        raise AscendifyError("no command to run: give CMD ARGS..., e.g. `python train.py`")
    command = options.command
    # torchrun habits: `-m pkg.mod` and a bare `train.py` both run under the python on PATH.
    if options.module:
        command = ("python", "-m", *command)
    elif command[0].endswith(".py") and not options.verbatim:
        command = ("python", *command)
    if shutil.which(command[0], path=env.get("PATH")) is None and not os.access(
        command[0], os.X_OK
    ):
        raise AscendifyError(f"command not found: {command[0]!r} (not an executable on PATH)")
    return command


def _devices(
    options: LaunchOptions,
    env: Mapping[str, str],
    root: Path,
    *,
    requested: str | None,
    server: RankServer | None,
    origins: dict[str, str],
) -> tuple[int, tuple[str, ...], dict[str, str], str]:
    """Processes on this node, the device id of each, their device IPs when known, and the kind
    of the devices."""
    found = discover_devices(env, root)
    if server is not None:
        _check_rank_count(len(server.devices), found, f"the rank table's server {server.server_id}")
        _check_table_devices(server, found)
        return (*_table_devices(server, requested, origins), found.kind)
    # "0" is how ModelArts says MA_NUM_GPUS on a CPU-only job: count what is there.
    if requested in (None, "auto", "0"):
        count = len(found.ids) or 1
        origins["nproc_per_node"] = f"auto: {found.reason}"
    else:
        count = _int("--nproc-per-node", requested, 1)
        if count < 1:
            raise AscendifyError(f"--nproc-per-node must be at least 1, got {count}")
    _check_rank_count(count, found, "--nproc-per-node")
    ids = found.ids[:count] if len(found.ids) >= count else tuple(str(i) for i in range(count))
    if found.kind == "cpu" and options.hccn_conf is None:
        return count, ids, {}, found.kind
    ips, source = device_ips(env, ids, options.hccn_conf, root)
    origins["device_ips"] = source
    return count, ids, ips, found.kind


def _check_rank_count(count: int, found: LocalDevices, what: str) -> None:
    """No more ranks than cards on an accelerator node, and never more than the stated maximum."""
    if count > MAX_DEVICES_PER_SERVER:
        raise AscendifyError(
            f"{what} asks for {count} ranks on this node; at most {MAX_DEVICES_PER_SERVER} are supported"
        )
    if found.kind != "cpu" and count > len(found.ids):
        raise AscendifyError(
            f"{what} asks for {count} ranks on this node but it has {len(found.ids)} "
            f"{found.kind.upper()} device(s) ({found.reason})"
        )


def _check_table_devices(server: RankServer, found: LocalDevices) -> None:
    """Each device the table gives this node must be one of its cards (a CPU node has none to check)."""
    if found.kind == "cpu":
        return
    for device in server.devices:
        if device.device_id not in found.ids:
            raise AscendifyError(
                f"rank table field 'device_id' of server {server.server_id}: device "
                f"{device.device_id} is not on this node ({found.reason})"
            )


def _table_devices(
    server: RankServer, requested: str | None, origins: dict[str, str]
) -> tuple[int, tuple[str, ...], dict[str, str]]:
    """The platform's table decides, as ModelArts' launcher does: one rank per listed device."""
    count = len(server.devices)
    if requested not in (None, "auto", "0") and requested != str(count):
        raise AscendifyError(
            f"--nproc-per-node {requested} disagrees with the platform rank table "
            f"({count} devices on server {server.server_id})"
        )
    origins["nproc_per_node"] = f"platform rank table: {count} devices on {server.server_id}"
    ids = tuple(device.device_id for device in server.devices)
    ips = {d.device_id: d.device_ip for d in server.devices if d.device_ip is not None}
    return count, ids, ips


def _platform_rank_table(env: Mapping[str, str], timeout: float) -> tuple[RankTable, Path] | None:
    """The table the platform gives, if any (``RANK_TABLE_FILE_V_1_0`` wins, as on ModelArts)."""
    if env.get("RANK_TABLE_FILE_V_1_0"):
        path = Path(env["RANK_TABLE_FILE_V_1_0"])
    elif env.get("RANK_TABLE_FILE"):
        path = Path(env["RANK_TABLE_FILE"])
        # ModelArts names a directory that holds the v0 template.
        if path.is_dir() or not path.suffix:
            path = path / _V0_FILE
    else:
        return None
    return read_rank_table(path, timeout), path


def _current_server(
    table: RankTable, env: Mapping[str, str], local_addr: str | None, node_rank: int | None
) -> RankServer:
    pod = env.get("MA_CURRENT_INSTANCE_NAME") or env.get("BATCH_TASK_CURRENT_INSTANCE")
    index = table.find_server(pod_name=pod, server_id=local_addr)
    if index >= 0:
        return table.servers[index]
    if node_rank is not None and node_rank < len(table.servers):
        return table.servers[node_rank]
    if len(table.servers) == 1:
        return table.servers[0]
    # ModelArts' launcher silently takes the first server here; a wrong guess double-books devices.
    raise AscendifyError(
        f"cannot tell which of the rank table's {len(table.servers)} servers is this node: "
        "give --local-addr (a server_id) or --node-rank"
    )


def _staging_dir(options: LaunchOptions, env: Mapping[str, str], cwd: Path) -> Path:
    # ModelArts keeps its inputs/ and outputs/ under the mount path. An explicit --cwd moves the
    # ranks, not the staged channels: a job's code copy is shared by its nodes.
    if env.get("MA_MOUNT_PATH"):
        return Path(env["MA_MOUNT_PATH"])
    return Path.cwd() if options.cwd is not None else cwd


def _cwd(options: LaunchOptions, env: Mapping[str, str]) -> Path:
    # ModelArts runs the boot file from the job directory where it unpacked the code.
    if options.modelarts and env.get("MA_JOB_DIR") and Path(env["MA_JOB_DIR"]).is_dir():
        return Path(env["MA_JOB_DIR"])
    return options.cwd.absolute() if options.cwd is not None else Path.cwd()


def _log_dir(options: LaunchOptions, env: Mapping[str, str]) -> Path:
    if options.log_dir is not None:
        return options.log_dir.absolute()
    if options.modelarts:
        for variable in ("BATCH_TASK_LOG_PATH", "MA_LOG_DIR"):
            if env.get(variable) and Path(env[variable]).is_dir():
                return Path(env[variable])
    # A fresh directory per run so that no earlier run's logs are overwritten, outside the project.
    return cache_dir(env) / "logs" / f"run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def _own_address() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
