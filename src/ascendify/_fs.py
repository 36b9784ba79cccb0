"""The one place where files of a user's tree are read and results are written.

Reading (:func:`read_source`): only regular files, never through a symbolic link, never more than a
size limit, and never blocking (a FIFO named ``*.py`` is refused, not opened for a read that waits
forever; a link ``zero.py -> /dev/zero`` is refused, not read until memory runs out).

Writing (:func:`write_bytes`, :func:`write_copy`, :func:`copy_file`, :func:`output_file`, :func:`make_dir`,
:func:`make_link`, :func:`open_log`): every path written must lie inside the folder it belongs to
once resolved, and no link is ever written through. A file is created with ``O_EXCL`` (which
fails on a link instead of following it); where something has the name already, it is written
under a temporary name renamed over it (a rename replaces a link, never follows it). A failed write
(disk full) never leaves a truncated file or a temporary behind. Results are written into folders
the run makes, which no other process reads while they are written. Any failure is a
:class:`WriteError` naming the path, which the command line shows as one line.
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ascendify.errors import AscendifyError

MAX_SOURCE_BYTES = 10 * 1024 * 1024  # larger sources are copied, never parsed
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1024 * 1024


class NotRead(Exception):
    """A file that was not read, with the reason as a phrase for a report line."""


class Missing(NotRead):
    """A path where no file is (a caller may wait for one to appear)."""


class TooLarge(NotRead):
    """A regular file over the size limit: it may be copied, but it is not read."""


class WriteError(AscendifyError):
    """A result could not be written (disk full, read-only folder, a path leaving its folder)."""


def resolved(path: Path) -> Path:
    """``path`` with every link resolved; never raises (a link loop stays unresolved)."""
    return Path(os.path.realpath(path))


def refuse_output_inside_input(source: Path, output: Path) -> None:
    """An output folder equal to or inside the input folder would write into the user's project."""
    root, out = resolved(source), resolved(output)
    if out == root or is_below(root, out):
        raise AscendifyError(f"output {output} is inside the input {source}")


def shown(text: str | Path) -> str:
    """Text safe to print: bytes of a name that are not UTF-8 (kept by Python as surrogates) become
    ``\\xff`` escapes instead of an encoding error on the console."""
    return os.fsencode(str(text)).decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class SourceFile:
    """A regular file as read: its bytes, and what a copy of it keeps (mode and times)."""

    data: bytes
    mode: int  # permission bits
    times_ns: tuple[int, int]  # access and modification times


def read_source(path: Path, limit: int = MAX_SOURCE_BYTES) -> SourceFile:
    """The regular file ``path`` (not a link, not over ``limit``), or :class:`NotRead`."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise NotRead(_kind(path))
        descriptor = os.open(path, _READ_FLAGS)
    except FileNotFoundError as error:
        raise Missing(f"cannot read: {_reason(error)}") from None
    except OSError as error:
        raise NotRead(f"cannot read: {_reason(error)}") from None
    with os.fdopen(descriptor, "rb") as stream:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):  # replaced since the lstat above
            raise NotRead("not a regular file")
        if info.st_size > limit:
            raise TooLarge(f"file too large ({info.st_size} bytes, limit {limit})")
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise NotRead(f"cannot read: {_reason(error)}") from None
    if len(data) > limit:  # it grew while we read it
        raise TooLarge(f"file too large (over the limit of {limit} bytes)")
    return SourceFile(data, stat.S_IMODE(info.st_mode), (info.st_atime_ns, info.st_mtime_ns))


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return "symbolic link, not followed"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def is_below(root: Path, path: Path) -> bool:
    """Whether ``path`` lies strictly below ``root``, comparing the paths as given (resolve first)."""
    return root in path.parents


def inside(root: Path, path: Path) -> Path:
    """``path`` with its folder resolved, if that folder is ``root`` or below it; else :class:`WriteError`.

    The last part is not resolved: writers replace it (a link there is replaced, never followed).
    """
    folder, base = resolved(path.parent), resolved(root)
    if folder != base and not is_below(base, folder):
        raise WriteError(f"refusing to write {path}: its folder resolves outside {root}")
    return folder / path.name


@contextmanager
def output_file(path: Path, root: Path, mode: int | None = None) -> Iterator[BinaryIO]:
    """A file written at ``path``: created in place where nothing is (the folders a run makes for
    its result: one change to the folder, where a temporary name and a rename make two), else under
    a temporary name renamed over what is there (a link of that name is replaced, never followed).
    A failed write leaves neither the file nor a temporary.

    Its mode is ``mode`` exactly, or that of any new file (0o666 narrowed by the umask).
    """
    target = written = inside(root, path)
    try:
        # O_EXCL: fails on anything of that name, a link included, which it never follows.
        descriptor = os.open(target, _NEW_FILE_FLAGS, 0o666)
    except FileExistsError:
        written = target.with_name(f".ascendify-{secrets.token_hex(6)}.tmp")
        descriptor = _create(path, written)
    except OSError as error:
        raise WriteError(f"cannot write {path}: {_reason(error)}") from None
    try:
        with os.fdopen(descriptor, "wb") as stream:
            yield stream
            if mode is not None:
                os.chmod(descriptor, mode)
        if written != target:
            os.replace(written, target)
    except BaseException as error:
        _remove_quietly(written)
        if isinstance(error, OSError):
            raise WriteError(f"cannot write {path}: {_reason(error)}") from None
        raise


def _create(path: Path, at: Path) -> int:
    try:
        return os.open(at, _NEW_FILE_FLAGS, 0o666)
    except OSError as error:
        raise WriteError(f"cannot write {path}: {_reason(error)}") from None


def _remove_quietly(path: Path) -> None:
    with suppress(OSError):  # already gone, or the same failure that is being reported
        os.unlink(path)


def write_bytes(path: Path, data: bytes, root: Path, mode: int | None = None) -> None:
    with output_file(path, root, mode) as stream:
        stream.write(data)


def write_copy(source: SourceFile, path: Path, root: Path) -> None:
    """A copy of a file read already: its bytes, mode and times (no second read of it)."""
    _write_as_copy(path, root, [source.data], source.mode, source.times_ns)


def _write_as_copy(
    path: Path, root: Path, chunks: Iterable[bytes], mode: int, times_ns: tuple[int, int]
) -> None:
    with output_file(path, root, mode) as stream:
        for chunk in chunks:
            stream.write(chunk)
        stream.flush()
        os.utime(stream.fileno(), ns=times_ns)


def copy_file(source: Path, path: Path, root: Path) -> None:
    """Copy the regular file ``source`` (not a link) with its mode and times; :class:`NotRead` if it is not one."""
    try:
        descriptor = os.open(source, _READ_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotRead("symbolic link, not followed") from None
        raise NotRead(f"cannot read: {_reason(error)}") from None
    with os.fdopen(descriptor, "rb") as reader:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRead("not a regular file")
        chunks = iter(lambda: _read_chunk(reader), b"")
        times_ns = (info.st_atime_ns, info.st_mtime_ns)
        _write_as_copy(path, root, chunks, stat.S_IMODE(info.st_mode), times_ns)


def _read_chunk(reader: BinaryIO) -> bytes:
    try:
        return reader.read(_COPY_CHUNK)
    except OSError as error:
        raise NotRead(f"cannot read: {_reason(error)}") from None


def make_output_dir(path: Path) -> None:
    """The output folder the user named, with its parents (it may exist already)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WriteError(f"cannot create {path}: {_reason(error)}") from None


def make_dir(path: Path, root: Path) -> None:
    """Create the directory ``path`` (or accept a real one already there; a link there is refused)."""
    target = inside(root, path)
    try:
        os.mkdir(target)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(target).st_mode):
            raise WriteError(
                f"cannot create the folder {path}: something else has its name"
            ) from None
    except OSError as error:
        raise WriteError(f"cannot create the folder {path}: {_reason(error)}") from None


def make_link(path: Path, target: str, root: Path) -> None:
    """Recreate a symbolic link as a link (its target is data: it is never resolved or followed)."""
    try:
        os.symlink(target, inside(root, path))
    except OSError as error:
        raise WriteError(f"cannot create the link {path}: {_reason(error)}") from None


def open_log(path: Path, root: Path) -> io.TextIOWrapper:
    """A UTF-8 log file opened for appending, never through a link (odd bytes in names are escaped)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(inside(root, path), flags, 0o666)
        return open(descriptor, "a", encoding="utf-8", errors="backslashreplace")
    except OSError as error:
        raise WriteError(f"cannot write {path}: {_reason(error)}") from None


def remove_tree(path: Path) -> None:
    """Remove a previous result (links in it are removed, never followed)."""
    try:
        shutil.rmtree(path)
    except OSError as error:
        raise WriteError(f"cannot remove {path}: {_reason(error)}") from None
