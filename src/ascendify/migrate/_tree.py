"""The outer layer: mirror the input tree, migrate its Python files in parallel, write the result.

Planning (what is in SRC and what goes where) is separate from the effects. Nothing is ever written
below SRC; in preview mode (``--diff``/``--check``) nothing is written at all. Every file is read and
written through :mod:`ascendify._fs`: links are recreated as links and never followed, files that are
not regular (FIFOs, devices) are not copied, and nothing is written outside the result directory.
A result directory holds :data:`INCOMPLETE_MARKER` from its creation until :func:`finish_output`.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ascendify._fs import (
    MAX_SOURCE_BYTES,
    NotRead,
    TooLarge,
    WriteError,
    copy_file,
    make_dir,
    make_link,
    make_output_dir,
    read_source,
    refuse_output_inside_input,
    remove_tree,
    resolved,
    write_bytes,
    write_copy,
)
from ascendify._parallel import parallel_map
from ascendify.configs import config_kind, kind_of
from ascendify.errors import AscendifyError
from ascendify.migrate._configs import migrate_config
from ascendify.migrate._engine import (
    Changed,
    Failed,
    Skipped,
    SkipReason,
    Unchanged,
    migrate_source,
)
from ascendify.migrate._modes import Target
from ascendify.migrate._project import project_names
from ascendify.migrate._registry import registry_for
from ascendify.migrate._rule import Change
from ascendify.migrate._settings import Settings
from ascendify.source import SharedParse, collector_paused, decode
from ascendify.targets.portable import has_no_counterpart

RESULT_SUFFIX = "_msft"
PYTHON_SUFFIXES = (".py",)
INCOMPLETE_MARKER = "ascendify_incomplete.txt"
_INCOMPLETE_TEXT = (
    "This migration did not finish (it failed or was interrupted): the result is incomplete.\n"
    "Run ascendify migrate again with --force to replace it.\n"
)

# "not copied": the file could not be read, so the result lacks it.
Status = Literal["changed", "unchanged", "skipped", "failed", "not copied"]


class CompanionFinding(Protocol):
    """Something a companion found in the original source that may be left for a human: the
    migration lists it in ``unsupported_op`` unless it changed or reported that call itself."""

    @property
    def file(self) -> str: ...  # relative to SRC, with forward slashes

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...

    @property
    def op(self) -> str: ...  # the call, name or variable it is about, as messages spell it

    @property
    def tips(self) -> str: ...

    @property
    def code(self) -> str: ...

    @property
    def unsupported(self) -> bool: ...  # fails (or runs on the CPU) on the NPU; else it differs


class Companion(Protocol):
    """Work that rides on the migration's pass over the project (the command adds the static analysis
    this way, so a file is read, decoded and parsed once for both). Picklable: it goes to workers."""

    @property
    def directory(self) -> str:
        """Its folder at the top of the result (reserved: never mirrored from SRC)."""
        ...

    def inspect(self, relative: str, data: bytes, parse: SharedParse) -> object:
        """What it makes of one Python file, in the worker that migrates it (picklable; None: nothing)."""
        ...

    def write(
        self, source: Path, folder: Path, parts: Mapping[str, object], jobs: int
    ) -> tuple[str, Sequence[CompanionFinding]]:
        """Write its reports into ``folder`` from the parts :meth:`inspect` made (by relative path);
        returns one line for the log and what may be left for a human to port."""
        ...


@dataclass(frozen=True)
class Options:
    source: Path
    output: Path | None  # None only in preview mode
    settings: Settings = field(default_factory=Settings)
    jobs: int = 1
    force: bool = False
    diff: bool = False  # print a unified diff; write nothing
    check: bool = False  # exit 1 if anything would change; write nothing
    companion: Companion | None = None  # e.g. the analysis, written into the result too
    reports: str = ""  # the result's folder for the reports and the log ("": the result itself)

    @property
    def preview(self) -> bool:
        return self.diff or self.check


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one Python file (picklable: it comes back from worker processes)."""

    path: str  # relative to SRC, "/"-separated
    status: Status
    detail: str = ""  # skip reason or error
    changes: tuple[Change, ...] = ()
    diff: str = ""
    inspected: object = None  # what the run's companion made of the file


@dataclass(frozen=True)
class Link:
    path: str
    target: str
    outside: bool  # points outside SRC (or nowhere): kept as a link, never followed


@dataclass
class TreePlan:
    directories: list[str] = field(default_factory=list)
    python_files: list[str] = field(default_factory=list)
    # YAML, JSON and shell files that hold a framework setting (ascendify.configs): migrated too
    config_files: list[str] = field(default_factory=list)
    other_files: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    # What cannot be mirrored, with the reason: sockets, FIFOs, devices, unreadable directories.
    not_copied: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class TreeResult:
    source: Path
    result_dir: Path | None
    plan: TreePlan
    files: list[FileOutcome]

    def with_status(self, status: Status) -> list[FileOutcome]:
        return [outcome for outcome in self.files if outcome.status == status]

    @property
    def changes(self) -> Iterator[tuple[str, Change]]:
        for outcome in self.files:
            for change in outcome.changes:
                yield outcome.path, change


def result_dir_for(source: Path, output: Path, suffix: str = RESULT_SUFFIX) -> Path:
    return output / f"{resolved(source).name}{suffix}"


def prepare_output(options: Options) -> Path | None:
    """Validate SRC and OUT and create the empty result directory (None in preview mode).

    The new directory holds :data:`INCOMPLETE_MARKER` until :func:`finish_output` removes it.
    """
    source = resolved(options.source)
    if not source.is_dir():
        raise AscendifyError(f"input {options.source} is not a directory")
    if options.output is None:
        if not options.preview:
            raise AscendifyError("an output directory (-o) is required unless --diff or --check")
        return None
    output = resolved(options.output)
    refuse_output_inside_input(options.source, options.output)
    multi = (
        options.settings.modes.distributed is not None
    )  # single -> multi card: <name>_msft_multi
    result = result_dir_for(source, output, RESULT_SUFFIX + ("_multi" if multi else ""))
    if result == source or result in source.parents:
        raise AscendifyError(f"the input {options.source} is inside the result directory {result}")
    if options.preview:
        return None
    if result.is_symlink() or (result.exists() and not result.is_dir()):
        raise AscendifyError(f"{result} exists and is not a directory")
    if result.is_dir() and any(result.iterdir()):
        if not options.force:
            raise AscendifyError(_existing_result(result))
        remove_tree(result)
    make_output_dir(result)
    write_bytes(result / INCOMPLETE_MARKER, _INCOMPLETE_TEXT.encode(), result)
    return result


def _existing_result(result: Path) -> str:
    if (result / INCOMPLETE_MARKER).exists():
        return (
            f"{result} holds an incomplete result (an earlier run failed or was interrupted); "
            "use --force to replace it"
        )
    return f"{result} exists and is not empty (use --force to replace it)"


def finish_output(source: Path, result_dir: Path) -> None:
    """Mark the result complete: the root gets SRC's mode last (it may forbid writing)."""
    try:
        os.unlink(result_dir / INCOMPLETE_MARKER)
        os.chmod(result_dir, stat.S_IMODE(os.stat(source).st_mode))
    except OSError as error:
        raise WriteError(f"cannot finish {result_dir}: {error.strerror or error}") from None


def plan_tree(
    source: Path, reserved: frozenset[str] = frozenset(), max_bytes: int = MAX_SOURCE_BYTES
) -> TreePlan:
    """Everything under SRC, sorted, without following any symlink.

    A YAML, JSON or shell file is read to tell a framework configuration (migrated) from data
    (copied); one over ``max_bytes`` is data.

    ``reserved``: names at the top of the result that the run writes itself (reports, log); an entry
    of SRC with such a name is not mirrored (whatever it is, even a link, it is never written through).
    """
    root = resolved(source)
    plan = TreePlan()

    def unreadable(error: OSError) -> None:
        rel = Path(error.filename or root).relative_to(root).as_posix()
        plan.not_copied.append((rel, f"cannot list: {error.strerror or error}"))

    for directory, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        here = Path(directory)
        rel_dir = here.relative_to(root)
        if rel_dir == Path("."):
            for name in sorted(reserved.intersection(dirnames + filenames)):
                plan.not_copied.append((name, "the migration writes its own file of that name"))
            dirnames[:] = [name for name in dirnames if name not in reserved]
            filenames[:] = [name for name in filenames if name not in reserved]
        dirnames.sort()
        for name in list(dirnames):
            if (here / name).is_symlink():
                dirnames.remove(name)
                plan.links.append(_link(root, here / name, rel_dir / name))
            else:
                plan.directories.append((rel_dir / name).as_posix())
        for name in sorted(filenames):
            path, rel = here / name, (rel_dir / name).as_posix()
            try:
                mode = path.lstat().st_mode
            except OSError as error:  # gone since the listing
                plan.not_copied.append((rel, f"cannot read: {error.strerror or error}"))
                continue
            if stat.S_ISLNK(mode):
                plan.links.append(_link(root, path, rel_dir / name))
            elif not stat.S_ISREG(mode):
                plan.not_copied.append((rel, "not a regular file"))
            elif name.endswith(PYTHON_SUFFIXES):
                plan.python_files.append(rel)
            elif kind_of(name) is not None and _holds_settings(path, rel, max_bytes):
                plan.config_files.append(rel)
            else:
                plan.other_files.append(rel)
    return plan


def _holds_settings(path: Path, rel: str, max_bytes: int) -> bool:
    """Whether a YAML, JSON or shell file holds a framework setting (most hold data): worked out
    here, so that data files are copied as any other file rather than sent to the workers."""
    try:
        return config_kind(rel, read_source(path, max_bytes).data) is not None
    except NotRead:  # too large, or unreadable: copied (or reported) as any other file
        return False


def _link(root: Path, path: Path, rel: Path) -> Link:
    target = os.readlink(path)
    # A loop or a dangling link resolves to a path that does not exist.
    points_to = resolved(path.parent / target)
    inside = points_to == root or root in points_to.parents
    return Link(rel.as_posix(), target, outside=not (inside and points_to.exists()))


def migrate_tree(
    options: Options,
    result_dir: Path | None,
    plan: TreePlan,
    progress: Callable[[FileOutcome], None] | None = None,
) -> TreeResult:
    """Mirror the planned tree into ``result_dir`` (None: write nothing), migrating Python files."""
    source = resolved(options.source)
    if result_dir is not None:
        _mirror_skeleton(source, result_dir, plan)
    companion = options.companion
    # The portable target widens a CUDA check unless what it guards reaches a call left on CUDA,
    # in a project module the file imports included.
    portable = options.settings.modes.target is Target.PORTABLE
    project = project_names(
        source,
        plan.python_files,
        options.settings.max_bytes,
        options.jobs,
        has_no_counterpart if portable else None,
    )
    settings = dataclasses.replace(options.settings, project=project)
    run = Run(source, result_dir, settings, options.diff, companion)
    files = [*plan.python_files, *plan.config_files]
    outcomes = []
    # Built before the workers start: forked, they inherit it instead of each building its own.
    registry_for(settings)
    with closing(parallel_map(migrate_file, run, files, options.jobs)) as results:
        for outcome in results:
            outcomes.append(outcome)
            if progress is not None:
                progress(outcome)
    if result_dir is not None:
        _copy_directory_modes(source, result_dir, plan)
    return TreeResult(source, result_dir, plan, outcomes)


def _mirror_skeleton(source: Path, target: Path, plan: TreePlan) -> None:
    for rel in plan.directories:
        make_dir(target / rel, target)
    for rel in plan.other_files:
        try:
            copy_file(source / rel, target / rel, target)
        except NotRead as reason:  # one unreadable file must not stop the run
            plan.not_copied.append((rel, str(reason)))
    for link in plan.links:
        make_link(target / link.path, link.target, target)


def _copy_directory_modes(source: Path, target: Path, plan: TreePlan) -> None:
    # Deepest first, after every file is in place (a read-only directory would refuse them); the
    # root's mode comes last of all, in finish_output.
    for rel in reversed(plan.directories):
        try:
            info = os.stat(source / rel, follow_symlinks=False)
            os.utime(target / rel, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
            os.chmod(target / rel, stat.S_IMODE(info.st_mode), follow_symlinks=False)
        except OSError as error:
            raise WriteError(
                f"cannot set the mode of {target / rel}: {error.strerror or error}"
            ) from None


@dataclass(frozen=True)
class Run:
    """What every file of a tree migration shares (sent to each worker once)."""

    source: Path
    target: Path | None  # the result directory; None: write nothing
    settings: Settings
    want_diff: bool
    companion: Companion | None


def migrate_file(run: Run, rel: str) -> FileOutcome:
    """Read, migrate and (unless previewing) write one Python or configuration file (``rel``:
    relative to SRC). Runs in a worker process.

    A file that cannot be read is "not copied"; a result that cannot be written stops the run
    (:class:`~ascendify._fs.WriteError`: a full disk fails every later file too).
    """
    with collector_paused():
        return _migrate_file(run, rel)


def _migrate_file(run: Run, rel: str) -> FileOutcome:
    settings, target, companion = run.settings, run.target, run.companion
    path = run.source / rel
    inspected, read = None, None
    try:
        read = read_source(path, settings.max_bytes)
        data = read.data
        parse = SharedParse(data)  # one decode and parse for the migration and the companion
        result: Changed | Unchanged | Skipped | Failed = (
            migrate_source(data, settings, rel, parse)
            if rel.endswith(PYTHON_SUFFIXES)
            else migrate_config(data, settings, rel)
        )
        if companion is not None:
            inspected = companion.inspect(rel, data, parse)
    except TooLarge:
        data, result = b"", Skipped(SkipReason.TOO_LARGE)
    except NotRead as reason:
        return FileOutcome(rel, "not copied", str(reason))
    if target is not None:
        try:
            if read is None:  # too large to be read: copied as it streams
                copy_file(path, target / rel, target)
            elif isinstance(result, Changed):
                write_bytes(target / rel, result.data, target, read.mode)
            else:
                write_copy(read, target / rel, target)  # the bytes that were looked at
        except NotRead as reason:
            return FileOutcome(rel, "not copied", str(reason))
    if isinstance(result, Changed):
        diff = _unified_diff(rel, data, result) if run.want_diff else ""
        return FileOutcome(rel, "changed", changes=result.changes, diff=diff, inspected=inspected)
    if isinstance(result, Unchanged):
        return FileOutcome(rel, "unchanged", changes=result.changes, inspected=inspected)
    if isinstance(result, Skipped):
        return FileOutcome(rel, "skipped", result.reason.value, inspected=inspected)
    return FileOutcome(rel, "failed", result.error, inspected=inspected)


def _unified_diff(rel: str, before: bytes, result: Changed) -> str:
    old, _ = decode(before)
    new = result.data.decode(result.encoding)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
