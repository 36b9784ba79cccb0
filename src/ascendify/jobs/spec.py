"""The job spec: a TOML/YAML file or command-line flags -> a checked :class:`JobSpec`. Pure.

Keys of a spec file are the flag names in snake_case (``--boot-file`` -> ``boot_file``). Every
problem is a :class:`SpecError` that names the field and says why, the way ``job validate``
prints it.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import reprlib
import shlex
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.jobs.container import CONTAINER_VARIABLES, PRE_START_SCRIPT
from ascendify.jobs.flavor import FlavorError, parse_flavor
from ascendify.launch.manifests import KINDS as MANIFEST_KINDS
from ascendify.launch.options import JOB_SETTINGS, job_default, job_value
from ascendify.launch.plan import LAUNCHER_VARIABLES
from ascendify.limits import (
    MAX_DEVICES_PER_SERVER,
    MAX_LOCAL_NODES,
    MAX_LOCAL_RANKS,
    MAX_NODES,
    check_strings_size,
)
from ascendify.storage import ChannelError, check_url
from ascendify.textfile import parse_bounded, read_text

MANIFEST_ENGINES = MANIFEST_KINDS  # engines whose job is a Kubernetes manifest to apply
ENGINES = ("local", "ray", *MANIFEST_ENGINES)
SPEC_SUFFIXES = (".toml", ".yaml", ".yml", ".json")
# Environment names whose values are credentials, as shell patterns matched regardless of case
# (GITHUB_PAT, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, DB_PASSWORD ...). Their
# values are never stored (the job store, spec.json) nor shown (describe, the job pages): the ranks
# get them through their environment only. docs/jobs.md lists these.
SECRET_NAMES = (
    "*SECRET*", "*TOKEN*", "*PASSWORD*", "*PASSWD*", "*PASS", "*PASSPHRASE*", "*CREDENTIAL*",
    "*CREDS*", "*ACCESS_KEY*", "*PRIVATE*", "*API_KEY*", "*APIKEY*", "*_KEY", "*_PAT", "PAT",
    "AUTH", "AUTH_*", "*_AUTH", "*_AUTH_*", "*AUTHORIZATION*", "*OAUTH*", "*COOKIE*",
)  # fmt: skip
REDACTED = "***"
# Fields a Kubernetes engine cannot honour, and why: its pods run in the cluster, not under the
# job store that copies logs, reads metrics and installs requirements here.
MANIFEST_REFUSED = {
    "log_url": "the pods' logs stay with the cluster; leave log_url out",
    "metrics": "the series are read from the logs of jobs this machine runs; leave metrics out",
    "install_requirements": "build the requirements into the image",
    "address": "it names a Ray cluster; leave it out",
}


# The password of a URL's user information (scheme://user:PASSWORD@host/...), up to the last "@"
# before the host: DATABASE_URL=postgres://u:pw@db/x, https://user:token@mirror/...
_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)(?P<password>[^/\s]*)(?P<host>@[^/\s@]*)"
)


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (an environment variable, a hyperparameter) looks like it holds a secret."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_NAMES)


def masked(name: str, value: str) -> str:
    """``value`` as it may be stored and shown: ``***`` for a secret-shaped ``name``, else with
    the password of every URL in it replaced by ``***``."""
    if is_secret_name(name):
        return REDACTED
    return _URL_PASSWORD.sub(lambda found: f"{found['head']}{REDACTED}{found['host']}", value)


def is_masked(value: str) -> bool:
    """Whether a stored value lost its secret to :func:`masked` (the job's env must supply it)."""
    return value == REDACTED or any(
        found["password"] == REDACTED for found in _URL_PASSWORD.finditer(value)
    )


def shown_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A stored spec as it may be shown: every value of ``env`` and ``hyper`` :func:`masked` by
    today's rules (a job stored before a rule was added may hold the value)."""
    return {
        **spec,
        **{
            table: {k: masked(k, v) if isinstance(v, str) else v for k, v in spec[table].items()}
            for table in ("env", "hyper")
            if spec.get(table)
        },
    }


class SpecError(AscendifyError):
    """One bad field of a job spec."""

    def __init__(self, field_name: str, why: str) -> None:
        super().__init__(f"{field_name}: {why}")
        self.field = field_name


@dataclass(frozen=True)
class JobSpec:
    """A checked job: what runs, on how many nodes and cards, with which channels."""

    code_dir: Path  # absolute; snapshotted when the job is submitted
    boot_file: str  # relative to code_dir; a module with ``module``; a command with ``no_python``
    # ("" with ``boot_command``)
    name: str
    # A whole command line (ModelArts' boot command), run in each node's job dir (which holds the
    # code copy under the code dir's own name) instead of boot_file.
    boot_command: str | None = None
    engine: str = "local"
    module: bool = False
    no_python: bool = False
    auto: bool = False  # run GPU code unchanged: the boot file under ``python -m ascendify.auto``
    hyper: Mapping[str, str] = field(default_factory=dict)
    data_url: str | None = None
    train_url: str | None = None
    log_url: str | None = None
    nodes: int = 1
    cards: int = 1
    flavor: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    address: str | None = None  # the Ray cluster (else RAY_ADDRESS)
    install_requirements: bool = False
    image: str | None = None  # the container image of the Kubernetes manifests
    metrics: Mapping[str, str] = field(default_factory=dict)  # NAME -> REGEX, read from the logs
    # The launcher's settings a job passes to every node (declared in launch/options.py).
    grace_period: float = job_default("grace_period")
    max_restarts: int = job_default("max_restarts")  # after a failure, a lost node or a hang
    hang_timeout: float = job_default("hang_timeout")  # without output from any rank (0: off)
    resume_from_latest: str | None = job_default("resume_from_latest")  # a glob in train_url
    profile: str | None = job_default("profile")  # steps FIRST-LAST every rank profiles
    elastic: int = 0  # MIN of ``elastic: MIN:MAX``: the job goes on while MIN nodes remain
    # The code dir's own name: its copy's name in each node's job dir (ModelArts' user-job-dir),
    # kept when code_dir becomes a job's snapshot (the runner's spec, a rerun).
    code_name: str = ""

    @property
    def code_folder(self) -> str:
        """The code copy's folder name in a node's job dir (``code``, ModelArts' default, for a
        code dir without a name such as ``/``)."""
        return self.code_name or self.code_dir.name or "code"

    def training_args(self) -> tuple[str, ...]:
        """What follows the boot file, as ModelArts passes it: ``--k=v ... --data_url=...``."""
        args = [f"--{key}={value}" for key, value in self.hyper.items()]
        args += [f"--{key}={url}" for key, url in self._channels() if url is not None]
        return tuple(args)

    def command(self, python: str, code_root: Path) -> tuple[str, ...]:
        """The training command of every rank, with the code snapshot at ``code_root``."""
        if self.boot_command is not None:
            return (*shlex.split(self.boot_command), *self.training_args())
        if self.no_python:
            return (*shlex.split(self.boot_file), *self.training_args())
        if self.module:
            return (python, "-m", self.boot_file, *self.training_args())
        redirect = ("-m", "ascendify.auto") if self.auto else ()
        # An absolute boot file, as ModelArts runs it: the ranks' working dir is elsewhere.
        return (python, *redirect, str(code_root / self.boot_file), *self.training_args())

    def _channels(self) -> tuple[tuple[str, str | None], ...]:
        return (("data_url", self.data_url), ("train_url", self.train_url))

    def to_json(self) -> dict[str, Any]:
        """The spec as stored and shown: credentials in ``env`` (secret-shaped names, passwords in
        URLs) are replaced by ``***``."""
        data = asdict(self)
        data["code_dir"] = str(self.code_dir)
        data["hyper"] = dict(self.hyper)
        data["metrics"] = dict(self.metrics)
        data["env"] = {k: masked(k, v) for k, v in self.env.items()}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JobSpec:
        """A spec :meth:`to_json` wrote (already checked); redacted credentials are left out."""
        env = {k: v for k, v in data["env"].items() if not is_masked(v)}
        return cls(**{**data, "code_dir": Path(data["code_dir"]), "env": env})


FIELDS = tuple(JobSpec.__dataclass_fields__)


def load_spec_file(path: Path) -> dict[str, Any]:
    """The raw fields of a spec file; ``code_dir`` defaults to the file's directory.

    Read within the input limits: a regular UTF-8 file of bounded size, nested a few levels.
    """
    if path.suffix not in SPEC_SUFFIXES:
        raise AscendifyError(f"spec file {path}: use .toml, .yaml or .json")
    try:
        text = read_text(path, "spec file")
    except FileNotFoundError:
        raise AscendifyError(f"spec file {path} does not exist") from None
    try:
        data = parse_bounded(
            partial(_parse, path.suffix), text, f"spec file {path}", AscendifyError
        )
    except ValueError as error:
        raise AscendifyError(f"spec file {path} cannot be read: {error}") from None
    if not isinstance(data, dict):
        raise AscendifyError(
            f"spec file {path} must hold a table of fields, not {type(data).__name__}"
        )
    data.setdefault("code_dir", str(path.parent))
    code_dir = Path(str(data["code_dir"])).expanduser()
    data["code_dir"] = str(code_dir if code_dir.is_absolute() else path.parent / code_dir)
    return data


def _parse(suffix: str, text: str) -> Any:
    if suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        return tomllib.loads(text)
    import yaml

    # libyaml, where the wheel has it: 100 times quicker on nested text, and bounds nesting itself.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:  # in one line: the message spans several
        raise ValueError(" ".join(str(error).split())) from None


def resolve(raw: Mapping[str, Any]) -> JobSpec:
    """Check every field and build the spec; the first bad field raises :class:`SpecError`."""
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        close = difflib.get_close_matches(unknown[0], FIELDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known fields: {', '.join(FIELDS)}"
        raise SpecError(unknown[0], f"unknown field{hint}")
    code_dir = _code_dir(raw.get("code_dir"))
    module, no_python, auto = _flag(raw, "module"), _flag(raw, "no_python"), _flag(raw, "auto")
    if module + no_python + auto > 1:
        raise SpecError("module", "module, no_python and auto exclude each other")
    boot_command = _boot_command(raw, module or no_python or auto)
    boot_file = (
        ""
        if boot_command is not None
        else _boot_file(raw.get("boot_file"), code_dir, module=module, no_python=no_python)
    )
    cards, flavor = _cards(raw)
    nodes, least = _nodes(raw)
    engine = _text(raw, "engine") or "local"
    if engine not in ENGINES:
        raise SpecError("engine", f"{engine!r} is not one of {', '.join(ENGINES)}")
    spec = JobSpec(
        code_dir=code_dir,
        boot_file=boot_file,
        name=_name(raw.get("name"), _named_file(boot_command) if boot_command else boot_file),
        boot_command=boot_command,
        engine=engine,
        module=module,
        no_python=no_python,
        auto=auto,
        hyper=_table(raw, "hyper"),
        data_url=_url(raw, "data_url"),
        train_url=_url(raw, "train_url"),
        log_url=_url(raw, "log_url"),
        nodes=nodes,
        cards=cards,
        flavor=flavor,
        env=_table(raw, "env"),
        address=_text(raw, "address"),
        install_requirements=_flag(raw, "install_requirements"),
        image=_text(raw, "image"),
        metrics=_metrics(raw),
        code_name=_code_name(raw, code_dir),
        elastic=least,
        **{name: _launcher_setting(raw, name) for name in JOB_SETTINGS},
    )
    # A manifest's pods run the command in their image's working directory, not in a job dir.
    if boot_command is not None and spec.engine not in MANIFEST_ENGINES:
        _check_code_paths(boot_command, code_dir, spec.code_folder)
    if spec.engine in MANIFEST_ENGINES:
        _check_manifest_fields(spec)
    check_fits(spec)
    return spec


def _check_manifest_fields(spec: JobSpec) -> None:
    """A Kubernetes engine runs what it can honour, or the field it cannot is named."""
    if not spec.image:
        raise SpecError("image", f"engine {spec.engine} needs the container image to run")
    for name, why in MANIFEST_REFUSED.items():
        if getattr(spec, name):
            raise SpecError(name, f"engine {spec.engine} cannot honour it: {why}")
    if (spec.code_dir / PRE_START_SCRIPT).is_file():
        raise SpecError(
            "code_dir",
            f"engine {spec.engine} cannot honour its {PRE_START_SCRIPT}: a pod runs only the "
            "launcher; build the script's steps into the image",
        )


def check_fits(spec: JobSpec) -> None:
    """What passes here must also start: a local job's nodes and ranks on this machine, the env
    and hyperparameters in a process, each channel given once."""
    if spec.engine == "local" and spec.nodes > MAX_LOCAL_NODES:
        raise SpecError(
            "nodes",
            f"{spec.nodes}: engine local runs at most {MAX_LOCAL_NODES} nodes on this machine "
            "(one loopback address each)",
        )
    if spec.engine == "local" and spec.nodes * spec.cards > MAX_LOCAL_RANKS:
        raise SpecError(
            "cards",
            f"{spec.nodes} node(s) x {spec.cards} card(s): engine local runs at most "
            f"{MAX_LOCAL_RANKS} ranks on this machine",
        )
    for key, table, what in (("env", spec.env, "variable"), ("hyper", spec.hyper, "argument")):
        try:
            check_strings_size(dict(table), what)
        except ValueError as error:
            raise SpecError(key, str(error)) from None
    for channel, url in spec._channels():
        if url is not None and channel in spec.hyper:
            raise SpecError(
                "hyper",
                f"{channel} is given twice: as the {channel} field and as a hyperparameter "
                "(keep the field: its data is staged)",
            )


def _code_dir(value: Any) -> Path:
    if value is None:
        return Path.cwd()
    if not isinstance(value, str):
        raise SpecError("code_dir", f"expected a folder, got {_shown(value)}")
    path = Path(value).expanduser().absolute()
    if not path.is_dir():
        raise SpecError("code_dir", f"{value} is not a directory")
    return path


def _code_name(raw: Mapping[str, Any], code_dir: Path) -> str:
    """The code dir's own name (its last part, ``..`` resolved), or the one a stored spec gives."""
    value = raw.get("code_name")
    if value is None:
        return os.path.basename(os.path.normpath(code_dir))
    if not isinstance(value, str) or value in ("", ".", "..") or "/" in value or "\0" in value:
        raise SpecError("code_name", f"expected a folder name, got {_shown(value)}")
    return value


def _boot_command(raw: Mapping[str, Any], how_to_run: bool) -> str | None:
    """The boot command, checked: a command line that splits as a shell splits it."""
    value = raw.get("boot_command")
    if value is None:
        return None
    if raw.get("boot_file") is not None:
        raise SpecError("boot_command", "give boot_command or boot_file, not both")
    if how_to_run:
        raise SpecError("boot_command", "a command line: module, no_python and auto do not apply")
    if not isinstance(value, str) or not value.strip():
        raise SpecError("boot_command", f"expected a command line, got {_shown(value)}")
    try:
        shlex.split(value)
    except ValueError as error:
        raise SpecError("boot_command", f"{value!r}: {error}") from None
    return value


def _check_code_paths(boot_command: str, code_dir: Path, folder: str) -> None:
    """A script of the code named as if the command ran inside the code dir: it runs in the job
    dir, which holds the code as ``folder/`` (as on ModelArts), so it would not be found."""
    for word in shlex.split(boot_command):
        if not word.endswith((".py", ".sh")) or os.path.isabs(word):
            continue
        if not word.startswith(f"{folder}/") and (code_dir / word).is_file():
            raise SpecError(
                "boot_command",
                f"{word} would not be found: the command runs in the job dir, which holds the "
                f"code as {folder}/ (as on ModelArts); write {folder}/{word}",
            )


def _named_file(boot_command: str) -> str:
    """What names a job started by a boot command: its first script, else its program."""
    words = shlex.split(boot_command)
    return next((word for word in words if word.endswith((".py", ".sh"))), words[0])


def _boot_file(value: Any, code_dir: Path, *, module: bool, no_python: bool) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError("boot_file", "required: the script to run, e.g. boot_file = 'train.py'")
    if module or no_python:
        return value
    path = Path(value)
    if path.is_absolute():
        try:
            path = path.relative_to(code_dir)
        except ValueError:
            raise SpecError("boot_file", f"{value} is outside code_dir {code_dir}") from None
    if ".." in path.parts:  # the job runs a snapshot of code_dir: nothing outside it is there
        raise SpecError("boot_file", f"{value} leaves code_dir {code_dir} ('..')")
    if not (code_dir / path).is_file():
        raise SpecError("boot_file", f"{path} not found in code_dir {code_dir}")
    return path.as_posix()


def _cards(raw: Mapping[str, Any]) -> tuple[int, str | None]:
    flavor = _text(raw, "flavor")
    cards = _count(raw, "cards", MAX_DEVICES_PER_SERVER) if raw.get("cards") is not None else None
    if flavor is None:
        return cards or 1, None
    try:
        from_flavor = parse_flavor(flavor).cards
    except FlavorError as error:
        raise SpecError("flavor", str(error)) from None
    if from_flavor > MAX_DEVICES_PER_SERVER:
        raise SpecError(
            "flavor",
            f"{from_flavor} cards per node; a server holds at most {MAX_DEVICES_PER_SERVER}",
        )
    if cards is not None and cards != from_flavor:
        raise SpecError("cards", f"{cards} disagrees with flavor {flavor!r} ({from_flavor} cards)")
    return from_flavor, flavor


def _name(value: Any, boot_file: str) -> str:
    if value is not None and not isinstance(value, str | int):
        raise SpecError("name", f"expected text, got {_shown(value)}")
    name = str(value) if value is not None else re.sub(r"\W+", "-", Path(boot_file).stem).strip("-")
    if not re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_.]{0,63}", name or ""):
        raise SpecError("name", f"{name!r}: use 1-64 letters, digits, '-', '_' or '.'")
    return name


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise SpecError(key, f"expected text, got {_shown(value)}")
    return value


def _launcher_setting(raw: Mapping[str, Any], name: str) -> Any:
    try:
        return job_value(name, raw.get(name))
    except ValueError as error:
        raise SpecError(name, str(error)) from None


def _flag(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise SpecError(key, f"expected true or false, got {_shown(value)}")
    return value


def _count(raw: Mapping[str, Any], key: str, most: int) -> int:
    value = raw.get(key, 1)
    if isinstance(value, str) and value.isdecimal() and len(value) < 20:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise SpecError(key, f"must be a whole number from 1 to {most}, got {_shown(value)}")
    return value


def _nodes(raw: Mapping[str, Any]) -> tuple[int, int]:
    """``nodes`` and MIN of an elastic job (0: fixed), from ``elastic: MIN:MAX`` (MAX = nodes)
    or torchrun's ``nodes: MIN:MAX`` spelling."""
    nodes, elastic = raw.get("nodes", 1), raw.get("elastic", 0)
    if isinstance(nodes, str) and ":" in nodes:
        elastic, nodes = nodes, nodes.partition(":")[2]
    count = _count({"nodes": nodes}, "nodes", MAX_NODES)
    text = str(elastic)
    least, colon, most = text.partition(":")
    shown = f"{text}" if colon else f"{text}:{count}"
    if not (least.isdecimal() and (not colon or most.isdecimal())) or len(text) > 20:
        raise SpecError("elastic", f"must be MIN:MAX (nodes), got {_shown(elastic)}")
    if colon and int(most) != count:
        raise SpecError("elastic", f"{shown}: MAX must be the node count ({count})")
    if (colon or int(least)) and not 1 <= int(least) <= count:
        raise SpecError("elastic", f"{shown}: MIN must be from 1 to the node count ({count})")
    return count, (0 if int(least) == count else int(least))


def _shown(value: object) -> str:
    """``value`` for a message, shortened (a YAML alias can make a value of millions of items)."""
    return reprlib.repr(value)


def _table(raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key) or {}
    if not isinstance(value, Mapping):
        raise SpecError(key, f"expected a table of NAME = value, got {_shown(value)}")
    table: dict[str, str] = {}
    for name, item in value.items():
        _check_name(key, str(name))
        if isinstance(item, Mapping | list):
            raise SpecError(key, f"{name}: expected a single value, got {_shown(item)}")
        table[str(name)] = str(item).lower() if isinstance(item, bool) else str(item)
    return table


def _check_name(table: str, name: str) -> None:
    """An env or hyperparameter name: one word (a newline in it would forge console lines)."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
        raise SpecError(table, f"{_shown(name)} is not a usable name")
    if table == "env" and name in CONTAINER_VARIABLES:
        raise SpecError(
            table,
            f"{name} is set by the job on every node, as ModelArts sets it in a training "
            "container: leave it out",
        )
    if table == "env" and name in LAUNCHER_VARIABLES:
        raise SpecError(
            table,
            f"{name} is set by the launcher for every rank (its rank, the world's size, where "
            "the ranks meet): leave it out",
        )


def _metrics(raw: Mapping[str, Any]) -> dict[str, str]:
    from ascendify.jobs.metrics import MetricPatternError, user_rules

    value = raw.get("metrics") or {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise SpecError("metrics", f"expected a table of NAME = 'REGEX', got {_shown(value)}")
    try:
        return dict(user_rules({str(k): v for k, v in value.items()}))
    except MetricPatternError as error:
        raise SpecError("metrics", str(error)) from None


def _url(raw: Mapping[str, Any], key: str) -> str | None:
    url = _text(raw, key)
    if url is None:
        return None
    try:
        check_url(url, url)
    except ChannelError as error:
        raise SpecError(key, str(error)) from None
    return url


def pairs(
    values: list[str], what: str, environment: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``K=V`` flag values (``--hyper lr=0.1``, ``--env NAME=value``) as a table.

    With ``environment``, a bare ``NAME`` takes its value from there (``--env HF_TOKEN``): a secret
    given so is on no command line, not even the submitting one.
    """
    table: dict[str, str] = {}
    for value in values:
        key, equals, item = value.partition("=")
        if not equals and environment is not None and key:
            if key not in environment:
                raise SpecError(what, f"{key} is not set in this environment")
            item = environment[key]
        elif not equals or not key:
            form = "KEY=VALUE or NAME" if environment is not None else "KEY=VALUE"
            raise SpecError(what, f"expected {form}, got {_shown(value)}")
        if what != "metrics":  # a metric's name is checked with its pattern
            _check_name(what, key)
        table[key] = item
    return table


def secret_hyperparameters(hyper: Mapping[str, str]) -> list[str]:
    """Hyperparameters named like secrets: their values reach the process list (argv)."""
    return [name for name in hyper if is_secret_name(name)]
