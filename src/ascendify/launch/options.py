"""The launcher's settings, each declared once: :class:`LaunchOptions`.

A field's :func:`setting` names its flags, help and bounds next to its default. From that one
declaration come ``ascendify run``'s and ``ascendify job``'s flags (:func:`add_arguments`), the
options read back from them (:func:`from_args`), the one writer of an ``ascendify run`` command
line (:func:`to_argv`: a job's node plan and every Kubernetes manifest call it), the bounds
(:func:`check`) and a job spec's defaults and checks of the settings a job passes through
(:data:`JOB_SETTINGS`, :func:`job_value`). Adding a setting is adding a field here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.limits import (
    MAX_GRACE_PERIOD,
    MAX_HANG_TIMEOUT,
    MAX_RESTARTS,
    MAX_WAIT,
    MIN_HANG_TIMEOUT,
    seconds,
)

# Console mask, as torchrun's --tee: 1 = stdout, 2 = stderr, 3 = both (0 = log files only).
TEE_ALL = 3
# ModelArts declares a job hung after about 30 minutes without progress: a job watches for hangs
# by default, a bare ``ascendify run`` only when asked.
JOB_HANG_TIMEOUT = 1800.0

# Flag groups of ``ascendify run --help``: title -> description.
GROUPS = {
    "recovery": "A failed rank, a lost node or a hang stops every rank of every node; with "
    "restarts left the whole job starts again (ASCENDIFY_RESTART_COUNT, "
    "TORCHELASTIC_RESTART_COUNT).",
    "input/output channels": "--data_url and --train_url values that are s3:// or obs:// URLs "
    "are staged to local dirs of the current folder, ./inputs/<name>_0 and ./outputs/<name>_0 "
    "(inputs before the ranks start, outputs during and after the job; kept afterwards) and "
    "the ranks get the local paths; MA_INPUTS/MA_OUTPUTS are read too.",
}


@dataclass(frozen=True)
class Seconds:
    """A number of seconds from ``least`` (or 0 when ``zero``) to ``most``."""

    most: float
    zero: bool = True
    least: float = 0.0

    def check(self, value: object) -> None:
        seconds(value, most=self.most, zero=self.zero, least=self.least)


@dataclass(frozen=True)
class Count:
    """A whole number from ``least`` to ``most``."""

    least: int
    most: int

    def check(self, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(
                f"must be a whole number from {self.least} to {self.most}, got {value!r}"
            )
        if not self.least <= value <= self.most:
            raise ValueError(
                f"must be a whole number from {self.least} to {self.most}, got {value}"
            )


@dataclass(frozen=True)
class Setting:
    """How one field of :class:`LaunchOptions` is spelled, shown, read, written and bounded.

    ``form``: ``value`` (FLAG VALUE), ``switch`` (FLAG alone), ``repeat`` (FLAG VALUE once per
    item), ``optional`` (FLAG or FLAG=VALUE; ``const`` gives the value of FLAG alone). ``parse``
    turns the flag's text into the field's value (argparse's ``type`` where it is a plain
    conversion); ``read`` maps the flag's text to fields (ValueError: it is wrong) and ``write``
    the options to the flag's value (None: not given), for a flag that sets two fields or a
    value not written as ``str()`` writes it. ``job``: a job spec takes the setting under the
    same name, with ``job_default`` where a job's default differs (say why where it is declared).
    """

    flags: tuple[str, ...]
    help: str
    metavar: str | None = None
    form: str = "value"
    parse: Callable[[str], Any] | None = None
    bound: Seconds | Count | None = None
    check: Callable[[Any], None] | None = None
    group: str | None = None
    job: bool = False
    job_default: Any = None
    const: Callable[[], str] | None = None
    read: Callable[[Any], Mapping[str, Any]] | None = None
    write: Callable[[LaunchOptions], str | None] | None = None
    shown_default: bool = False  # "(DEFAULT)" ends the help

    @property
    def flag(self) -> str:
        """The spelling :func:`to_argv` writes and messages name: the first long one."""
        return next(flag for flag in self.flags if flag.startswith("--"))


def setting(default: Any, *flags: str, help: str, **how: Any) -> Any:
    """A :class:`LaunchOptions` field with its default and its :class:`Setting`."""
    return field(default=default, metadata={"setting": Setting(flags, help, **how)})


def _nproc(text: str) -> None:
    if not (text == "auto" or (text.isdecimal() and int(text) > 0)):
        raise ValueError(f"takes a number of at least 1 or 'auto', got {text!r}")


def _node_count(text: str) -> dict[str, int | None]:
    """``--nnodes N`` or torchrun's ``MIN:MAX``: MIN None for a fixed count."""
    low, colon, high = text.partition(":")
    try:
        least, most = int(low), int(high if colon else low)
    except ValueError:
        raise ValueError(f"takes a whole number or MIN:MAX, got {text!r}") from None
    if colon and not 1 <= least <= most:
        raise ValueError(f"{text}: MIN must be at least 1 and at most MAX")
    return {"min_nnodes": least if colon else None, "nnodes": most}


def _write_node_count(options: LaunchOptions) -> str | None:
    if options.nnodes is None:
        return None
    least = f"{options.min_nnodes}:" if options.min_nnodes is not None else ""
    return f"{least}{options.nnodes}"


def _ranks(text: str) -> dict[str, tuple[int, ...]]:
    try:
        return {"local_ranks_filter": tuple(int(item) for item in text.split(",") if item.strip())}
    except ValueError:
        raise ValueError(f"takes ranks like 0,1, got {text!r}") from None


def _write_ranks(options: LaunchOptions) -> str | None:
    ranks = options.local_ranks_filter
    return None if ranks is None else ",".join(map(str, ranks))


def _profile_steps(steps: str) -> None:
    from ascendify.perf.starthook import parse_steps

    try:
        parse_steps(steps)
    except AscendifyError as error:
        raise ValueError(str(error).removeprefix("--profile ")) from None


def _default_steps() -> str:
    from ascendify.perf.starthook import DEFAULT_STEPS

    return DEFAULT_STEPS


@dataclass(frozen=True)
class LaunchOptions:
    """The launcher's inputs as given on the command line; ``None`` means "not given"."""

    command: tuple[str, ...]
    nnodes: int | None = setting(
        None,
        "--nnodes",
        help="number of nodes; MIN:MAX goes on while at least MIN remain (torchrun's spelling)",
        metavar="N|MIN:MAX",
        read=_node_count,
        write=_write_node_count,
    )
    # The job goes on while at least this many nodes remain: MIN of ``--nnodes MIN:MAX``.
    min_nnodes: int | None = setting(None, help="")
    nproc_per_node: str | None = setting(
        None,
        "--nproc-per-node",
        "--nproc_per_node",
        help="ranks on this node (default: auto = cards)",
        metavar="N|auto",
        check=_nproc,
    )
    node_rank: int | None = setting(
        None, "--node-rank", "--node_rank", help="this node's index, from 0", metavar="I", parse=int
    )
    master_addr: str | None = setting(
        None, "--master-addr", "--master_addr", help="address of node 0", metavar="ADDR"
    )
    master_port: int | None = setting(
        None,
        "--master-port",
        "--master_port",
        help="rendezvous port on node 0",
        metavar="PORT",
        parse=int,
    )
    local_addr: str | None = setting(
        None,
        "--local-addr",
        "--local_addr",
        help="this node's address (rank-table server_id)",
        metavar="ADDR",
    )
    hccn_conf: Path | None = setting(
        None,
        "--hccn-conf",
        "--hccn_conf",
        help="device IPs (address_<id>=ip lines)",
        metavar="FILE",
        parse=Path,
    )
    log_dir: Path | None = setting(
        None,
        "--log-dir",
        "--log_dir",
        help="per-rank log files go here (default: a new folder under "
        "$XDG_CACHE_HOME/ascendify/logs, else ~/.cache/ascendify/logs)",
        metavar="DIR",
        parse=Path,
    )
    job_id: str | None = setting(
        None,
        "--job-id",
        "--job_id",
        help="JOB_ID for the ranks (default: from the platform)",
        metavar="ID",
    )
    module: bool = setting(
        False, "-m", "--module", help="CMD is a Python module: run `python -m CMD`", form="switch"
    )
    # Never prefix ``python``, even to a ``.py`` file (torchrun's --no-python).
    verbatim: bool = setting(
        False,
        "--no-python",
        "--no_python",
        help="run CMD as given even if it ends in .py",
        form="switch",
    )
    # The ``python -m ascendify.davincirun`` form: the platform's folders are the ranks'.
    modelarts: bool = setting(
        False,
        "--modelarts",
        help="as `python -m ascendify.davincirun`: the ranks start in MA_JOB_DIR and log to "
        "MA_LOG_DIR when the platform gives them",
        form="switch",
    )
    tee: int = setting(
        TEE_ALL,
        "-t",
        "--tee",
        help="console: 0 none, 1 stdout, 2 stderr, 3 both",
        parse=int,
        bound=Count(0, TEE_ALL),
    )
    local_ranks_filter: tuple[int, ...] | None = setting(
        None,
        "--local-ranks-filter",
        "--local_ranks_filter",
        help="show only these local ranks",
        metavar="R,R",
        read=_ranks,
        write=_write_ranks,
    )
    grace_period: float = setting(
        10.0,
        "--grace-period",
        help="SIGTERM -> SIGKILL wait",
        metavar="S",
        parse=float,
        bound=Seconds(MAX_GRACE_PERIOD),
        job=True,
        shown_default=True,
    )
    join_timeout: float = setting(
        300.0,
        "--join-timeout",
        help="wait for nodes / rank table",
        metavar="S",
        parse=float,
        bound=Seconds(MAX_WAIT, zero=False),
        shown_default=True,
    )
    max_restarts: int = setting(
        0,
        "--max-restarts",
        "--max_restarts",
        help="restart the job up to N times",
        metavar="N",
        parse=int,
        bound=Count(0, MAX_RESTARTS),
        group="recovery",
        job=True,
        shown_default=True,
    )
    hang_timeout: float = setting(
        0.0,
        "--hang-timeout",
        help="no output nor progress (I/O, Python stack) from any rank for S seconds is a hang: "
        "record every rank's stack; 0 is off, else at least 1",
        metavar="S",
        parse=float,
        bound=Seconds(MAX_HANG_TIMEOUT, least=MIN_HANG_TIMEOUT),
        group="recovery",
        job=True,
        job_default=JOB_HANG_TIMEOUT,
        shown_default=True,
    )
    nan_check: bool = setting(
        False,
        "--nan-check",
        help="every rank checks each torch operator's output: the first NaN or inf ends the job, "
        "naming the rank, step, operator, module and line (as compare dump --nan-check)",
        form="switch",
        group="recovery",
    )
    # Steps FIRST-LAST every rank profiles into the log dir's profile/rank_<r>/.
    profile: str | None = setting(
        None,
        "--profile",
        help="profile steps FIRST-LAST of every rank (optimizer steps, from 0) into the log "
        "dir's profile/rank_<r>/; read them with `ascendify perf` (the log dir or a job's id)",
        metavar="STEPS",
        form="optional",  # --profile alone takes const's steps; to_argv writes --profile=STEPS
        const=_default_steps,
        check=_profile_steps,
        group="recovery",
        job=True,
    )
    # A glob of checkpoints; the newest complete one goes as --resume=PATH.
    resume_from_latest: str | None = setting(
        None,
        "--resume-from-latest",
        help="pass the newest complete matching file (relative: in --train_url's folder) as "
        "--resume=PATH",
        metavar="GLOB",
        group="recovery",
        job=True,
    )
    inputs: tuple[str, ...] = setting(
        (),
        "--input",
        help="also stage --NAME_url as an input channel (repeatable)",
        metavar="NAME",
        form="repeat",
        group="input/output channels",
    )
    outputs: tuple[str, ...] = setting(
        (),
        "--output",
        help="also upload --NAME_url as an output channel (repeatable)",
        metavar="NAME",
        form="repeat",
        group="input/output channels",
    )
    upload_interval: float = setting(
        60.0,
        "--upload-interval",
        "--upload_interval",
        help="seconds between output uploads while the job runs",
        metavar="S",
        parse=float,
        bound=Seconds(MAX_WAIT),  # 0: only at the end
        group="input/output channels",
        shown_default=True,
    )
    cwd: Path | None = setting(
        None,
        "--cwd",
        help="the ranks' working directory (default: the current one)",
        metavar="DIR",
        parse=Path,
    )


def settings() -> Iterator[tuple[Field[Any], Setting]]:
    """Each field of :class:`LaunchOptions` with its setting, in declaration order."""
    for one in fields(LaunchOptions):
        if "setting" in one.metadata:
            yield one, one.metadata["setting"]


DEFAULTS = LaunchOptions(command=())
# The settings a job spec takes under their own names (``job submit --hang-timeout``).
JOB_SETTINGS = tuple(one.name for one, how in settings() if how.job)


def job_default(name: str) -> Any:
    """A job's default of setting ``name``."""
    how = _setting(name)
    return getattr(DEFAULTS, name) if how.job_default is None else how.job_default


def _setting(name: str) -> Setting:
    return next(how for one, how in settings() if one.name == name)


def flag(name: str) -> str:
    """How setting ``name`` is spelled on the command line (``--node-rank``)."""
    return _setting(name).flag


def add_arguments(
    parser: argparse.ArgumentParser, names: tuple[str, ...] | None = None, job: bool = False
) -> None:
    """The flags of the settings ``names`` (all by default); with ``job``, the help shows a
    job's defaults. Every default is None: :func:`from_args` (or the job spec) fills it in."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for one, how in settings():
        if not how.flags or (names is not None and one.name not in names):
            continue
        target: argparse.ArgumentParser | argparse._ArgumentGroup = parser
        if how.group is not None and not job:
            if how.group not in groups:
                groups[how.group] = parser.add_argument_group(how.group, GROUPS[how.group])
            target = groups[how.group]
        target.add_argument(
            *how.flags, dest=one.name, default=None, **_argparse_form(one, how, job)
        )


def _argparse_form(one: Field[Any], how: Setting, job: bool) -> dict[str, Any]:
    text = how.help
    if how.shown_default:
        default = job_default(one.name) if job else one.default
        text = f"{text} ({default:g})"
    if how.form == "optional" and how.const is not None:
        text = f"{text} (STEPS alone: {how.const()})"
    if how.form == "switch":
        return {"action": "store_const", "const": True, "help": text}
    form: dict[str, Any] = {"metavar": how.metavar, "help": text}
    if how.form == "repeat":
        form["action"] = "append"
    if how.form == "optional":
        form["nargs"] = "?"
        form["const"] = how.const() if how.const is not None else None
    if how.parse is not None:
        form["type"] = how.parse
    return form


def from_args(ns: argparse.Namespace) -> LaunchOptions:
    """The options a command line parsed by :func:`add_arguments` gives (``CMD ARGS...`` from
    ``ns.command`` and ``ns.args``); a flag not given keeps its default."""
    given: dict[str, Any] = {}
    for one, how in settings():
        value = getattr(ns, one.name, None)
        if value is None:
            continue
        if how.read is not None:
            try:
                given.update(how.read(value))
            except ValueError as error:
                raise AscendifyError(f"{how.flag} {error}") from None
        elif how.form == "repeat":
            given[one.name] = tuple(value)
        else:
            given[one.name] = value
    command = (ns.command, *ns.args) if getattr(ns, "command", None) else ()
    return LaunchOptions(command=command, **given)


def to_argv(options: LaunchOptions) -> tuple[str, ...]:
    """``ascendify run``'s arguments that give ``options``: every setting that is not its
    default, then the command. The only writer of an ``ascendify run`` command line."""
    argv: list[str] = []
    for one, how in settings():
        value = getattr(options, one.name)
        written = how.write(options) if how.write is not None else None
        if written is not None:
            argv += [how.flag, written]
        elif how.write is not None or not how.flags or value == one.default:
            continue
        elif how.form == "switch":
            argv.append(how.flag)
        elif how.form == "repeat":
            argv += [word for item in value for word in (how.flag, str(item))]
        elif how.form == "optional":
            argv.append(f"{how.flag}={value}")  # FLAG VALUE could take the command for VALUE
        else:
            argv += [how.flag, _word(value)]
    return (*argv, *options.command)


def _word(value: object) -> str:
    """``120`` for 120.0 seconds: as a user would write it, and read back the same."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def check(options: LaunchOptions) -> LaunchOptions:
    """``options`` when every setting is within its bounds; else AscendifyError naming the flag."""
    if options.module and options.verbatim:
        raise AscendifyError(f"{flag('verbatim')} and {flag('module')} exclude each other")
    least, most = options.min_nnodes, options.nnodes
    if least is not None and (most is None or not 1 <= least <= most):
        raise AscendifyError(
            f"{flag('nnodes')} {least}:{most}: MIN must be at least 1 and at most MAX"
        )
    for one, how in settings():
        value = getattr(options, one.name)
        if value is None or value == one.default:
            continue
        try:
            _check_value(how, value)
        except ValueError as error:
            raise AscendifyError(f"{how.flag} {error}") from None
    return options


def _check_value(how: Setting, value: Any) -> None:
    if how.bound is not None:
        how.bound.check(value)
    if how.check is not None:
        how.check(value)


def job_value(name: str, value: Any) -> Any:
    """A job spec's value of setting ``name`` (a spec file's or a flag's; None: the job's
    default), checked; ValueError says what is wrong, for the caller to name the field."""
    how = _setting(name)
    if value is None:
        return job_default(name)
    if isinstance(how.bound, Count) and isinstance(value, str) and value.isdecimal():
        value = int(value)  # a count written as text in a spec file
    text = how.parse is None and how.read is None and how.form in ("value", "optional")
    if text and not isinstance(value, str):
        raise ValueError(f"expected text, got {value!r}")
    _check_value(how, value)
    return float(value) if isinstance(how.bound, Seconds) else value
