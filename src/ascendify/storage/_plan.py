"""Which channels a job has and how its command line changes: pure, no I/O.

A channel is a ``--<name>_url`` argument of the training command (``--data_url`` and ``--train_url``
always, others when declared) or an entry of ModelArts' MA_INPUTS / MA_OUTPUTS JSON. Remote
channels get a local staging dir, ``<workdir>/inputs/<name>_0`` or ``<workdir>/outputs/<name>_0``
as on ModelArts, and every remote argument value is rewritten to it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ascendify._fs import is_below
from ascendify.storage._errors import ChannelError
from ascendify.storage._remote import (
    REMOTE_SCHEMES,
    S3Settings,
    bucket_of,
    is_remote,
    local_path,
    scheme_of,
)

Direction = Literal["input", "output"]
INPUT: Direction = "input"
OUTPUT: Direction = "output"
DEFAULT_INPUTS = ("data_url",)
DEFAULT_OUTPUTS = ("train_url",)
_PLATFORM_VARIABLES: tuple[tuple[str, Direction], ...] = (
    ("MA_INPUTS", INPUT),
    ("MA_OUTPUTS", OUTPUT),
)


@dataclass(frozen=True)
class Channel:
    """One input or output location of a job.

    ``url`` is what the user gave (``file://`` already stripped for local ones); ``local_dir`` is
    where the ranks read or write. ``remote`` channels are copied between the two.
    """

    name: str
    direction: Direction
    url: str
    local_dir: str
    remote: bool


@dataclass(frozen=True)
class ChannelPlan:
    """The channels of a job, the rewritten command and how to reach the object store.

    ``env`` holds variables every rank needs: ``<name>=<local_dir>`` for MA_INPUTS/MA_OUTPUTS
    channels whose ``access_method`` is ``env``.
    """

    channels: tuple[Channel, ...]
    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    settings: S3Settings = field(default_factory=S3Settings)

    @property
    def remote_inputs(self) -> tuple[Channel, ...]:
        return tuple(c for c in self.channels if c.remote and c.direction == "input")

    @property
    def remote_outputs(self) -> tuple[Channel, ...]:
        return tuple(c for c in self.channels if c.remote and c.direction == "output")


@dataclass(frozen=True)
class _Occurrence:
    """A ``--<name>`` option found in argv; ``index`` is the token holding its value."""

    name: str
    value: str
    index: int
    inline: bool  # ``--name=value`` rather than ``--name value``


@dataclass(frozen=True)
class _PlatformChannel:
    """An entry of MA_INPUTS / MA_OUTPUTS."""

    name: str
    direction: Direction
    url: str
    local_dir: str | None
    access_method: str


def check_url(url: str, what: str) -> None:
    """Reject unsupported schemes and remote URLs without a bucket; ``what`` names the source."""
    scheme = scheme_of(url)
    if scheme not in ("", "file", *REMOTE_SCHEMES):
        raise ChannelError(
            f"{what}: unsupported scheme {scheme!r}; use a local path, file://, s3:// or obs://"
        )
    if scheme in REMOTE_SCHEMES and not bucket_of(url):
        raise ChannelError(f"{what}: {url!r} names no bucket (expected {scheme}://BUCKET/PREFIX)")


def parameter_name(name: str) -> str:
    """The argument of a declared channel: ``extra`` and ``extra_url`` both mean ``--extra_url``."""
    bare = name.lstrip("-")
    return bare if bare.endswith("_url") else f"{bare}_url"


def _find_options(argv: Sequence[str], names: Iterable[str]) -> list[_Occurrence]:
    wanted = set(names)
    found: list[_Occurrence] = []
    for index, token in enumerate(argv):
        if not token.startswith("--"):
            continue
        option, inline, value = token[2:].partition("=")
        if option not in wanted:
            continue
        if inline:
            found.append(_Occurrence(option, value, index, inline=True))
        elif index + 1 < len(argv) and not argv[index + 1].startswith("-"):
            found.append(_Occurrence(option, argv[index + 1], index + 1, inline=False))
    return found


def _platform_entries(env: Mapping[str, str], variable: str) -> list[dict[str, Any]]:
    raw = env.get(variable, "").strip()
    if not raw:
        return []
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ChannelError(f"{variable} is not valid JSON: {error}") from None
    key = "inputs" if variable == "MA_INPUTS" else "outputs"
    entries = document.get(key) if isinstance(document, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ChannelError(f"{variable} must be an object with a list {key!r} of channel objects")
    return entries


def _obs_url(source: Any) -> str | None:
    """``obs_url`` of a ``remote`` (v2) or ``data_source`` (v1) object (OBS or dataset)."""
    if not isinstance(source, dict):
        return None
    for kind in ("obs", "datasets", "dataset"):
        inner = source.get(kind)
        if isinstance(inner, dict) and isinstance(inner.get("obs_url"), str):
            return str(inner["obs_url"])
    return None


def _platform_channel(
    entry: dict[str, Any], variable: str, direction: Direction
) -> _PlatformChannel:
    """An MA_INPUTS/MA_OUTPUTS entry: v2 (name, local_dir, remote), v1 (parameter, data_source)."""
    parameter: dict[str, Any] = (
        entry["parameter"] if isinstance(entry.get("parameter"), dict) else {}
    )
    name = entry.get("name") or parameter.get("label")
    url = _obs_url(entry.get("remote")) or _obs_url(entry.get("data_source"))
    if not isinstance(name, str) or not name or url is None:
        raise ChannelError(
            f"{variable}: entry {json.dumps(entry)[:200]} has no channel name or no obs_url"
        )
    local_dir = entry.get("local_dir") or parameter.get("value")
    check_url(url, f"{variable} channel {name}")
    return _PlatformChannel(
        name=name,
        direction=direction,
        url=url,
        local_dir=str(local_dir) if local_dir else None,
        access_method=str(entry.get("access_method", "parameter")),
    )


def _staging_dir(workdir: str, direction: Direction, name: str) -> str:
    return os.path.join(os.path.abspath(workdir), f"{direction}s", f"{name}_0")


def _argv_channel(
    name: str, direction: Direction, values: set[str], workdir: str
) -> tuple[Channel, str]:
    """The channel of a ``--name`` argument and the value ranks get instead."""
    if len(values) > 1:
        raise ChannelError(f"--{name} is given more than once with different values")
    (value,) = values
    check_url(value, f"--{name}={value}")
    if is_remote(value):
        staging = _staging_dir(workdir, direction, name)
        # Keep a trailing slash: scripts that join paths by string concatenation rely on it.
        rewritten = staging + "/" if value.endswith("/") else staging
        return Channel(name, direction, value, staging, remote=True), rewritten
    path = local_path(value)
    return Channel(name, direction, path, path, remote=False), path


def _directions(inputs: Iterable[str], outputs: Iterable[str]) -> dict[str, Direction]:
    """Argument name -> direction of every channel argument to look for."""
    directions: dict[str, Direction] = dict.fromkeys(DEFAULT_INPUTS, INPUT)
    directions.update(dict.fromkeys(DEFAULT_OUTPUTS, OUTPUT))
    declarations: tuple[tuple[Iterable[str], Direction], ...] = ((inputs, INPUT), (outputs, OUTPUT))
    for names, direction in declarations:
        for declared in map(parameter_name, names):
            if directions.setdefault(declared, direction) != direction:
                raise ChannelError(f"--{declared} is declared both as an input and as an output")
    return directions


def _platform_local_dir(entry: _PlatformChannel, workdir: str) -> str:
    """Where a platform channel is staged: its ``local_dir``, which must lie inside the job's
    folder (a download writes there and an upload walks it: ``/`` would walk the machine)."""
    if entry.local_dir is None:
        return _staging_dir(workdir, entry.direction, entry.name)
    top = os.path.abspath(workdir)
    local_dir = os.path.abspath(os.path.join(top, entry.local_dir))
    if not is_below(Path(top), Path(local_dir)):
        variable = "MA_INPUTS" if entry.direction == INPUT else "MA_OUTPUTS"
        raise ChannelError(
            f"{variable} channel {entry.name}: local_dir {entry.local_dir} is outside the job's "
            f"folder {top}; give a folder inside it, or leave local_dir out"
        )
    return local_dir


def _add_platform_channels(
    channels: dict[str, Channel], platform: Iterable[_PlatformChannel], workdir: str
) -> dict[str, str]:
    """Merge MA_INPUTS/MA_OUTPUTS into ``channels``; return the variables for env-access ones."""
    rank_env: dict[str, str] = {}
    for entry in platform:
        given = channels.get(entry.name)
        if given is not None and given.remote:
            continue  # the command line names another remote location: it wins
        if not is_remote(entry.url):
            path = local_path(entry.url)
            channel = Channel(entry.name, entry.direction, path, path, remote=False)
        else:
            local_dir = (
                given.local_dir if given is not None else _platform_local_dir(entry, workdir)
            )
            channel = Channel(entry.name, entry.direction, entry.url, local_dir, remote=True)
        channels[entry.name] = channel
        if entry.access_method == "env":
            rank_env[entry.name] = channel.local_dir
    return rank_env


NODE_PREFIX = "node-{node}/"


def for_node(plan: ChannelPlan, node_rank: int) -> ChannelPlan:
    """Node ``node_rank``'s part of a multi-node job's plan.

    Each node uploads what it wrote itself, so the nodes must not share a prefix: node 0 keeps
    every remote output URL as given (where a one-node job puts its outputs), node ``i`` uploads
    below ``node-<i>/`` of it. Inputs are the same for every node.
    """
    if node_rank == 0:
        return plan
    prefix = NODE_PREFIX.format(node=node_rank)
    channels = tuple(
        replace(c, url=c.url.rstrip("/") + "/" + prefix)
        if c.remote and c.direction == OUTPUT
        else c
        for c in plan.channels
    )
    return replace(plan, channels=channels)


def plan_channels(
    argv: Sequence[str],
    env: Mapping[str, str],
    workdir: str | os.PathLike[str],
    inputs: Iterable[str] = (),
    outputs: Iterable[str] = (),
) -> ChannelPlan:
    """Plan the channels of the command ``argv``; see the module docstring.

    ``inputs``/``outputs`` declare extra channel arguments (``extra`` means ``--extra_url``).
    A remote command-line value wins over MA_INPUTS/MA_OUTPUTS for the same name; a local
    command-line value is where the platform channel is staged (ModelArts passes
    ``--data_url=<local_dir>`` that way). Raises :class:`ChannelError` for malformed input.
    """
    workdir = os.fspath(workdir)
    directions = _directions(inputs, outputs)
    occurrences = _find_options(argv, directions)
    platform = [
        _platform_channel(entry, variable, direction)
        for variable, direction in _PLATFORM_VARIABLES
        for entry in _platform_entries(env, variable)
    ]

    channels: dict[str, Channel] = {}
    replacement: dict[str, str] = {}
    for name, direction in directions.items():
        values = {o.value for o in occurrences if o.name == name}
        if values:
            channels[name], replacement[name] = _argv_channel(name, direction, values, workdir)
    rank_env = _add_platform_channels(channels, platform, workdir)

    new_argv = list(argv)
    for occurrence in occurrences:
        value = replacement[occurrence.name]
        new_argv[occurrence.index] = f"--{occurrence.name}={value}" if occurrence.inline else value
    return ChannelPlan(
        channels=tuple(channels.values()),
        argv=tuple(new_argv),
        env=rank_env,
        settings=S3Settings.from_env(env),
    )
