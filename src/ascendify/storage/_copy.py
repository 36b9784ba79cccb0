"""Copy a directory tree between object storage and a local directory, skipping unchanged files.

A file is unchanged when both sides have the same size and the object's ETag equals the file's
S3-style MD5 (of the whole file, or per :data:`PART_SIZE` part for multipart objects). Hashing is
avoided where an exact cheaper proof exists:

* download: every download stamps the object's LastModified on the local file, so a file with the
  stamp is the downloaded copy and is not hashed; files placed by someone else are hashed once
  and then stamped. Interrupted downloads never leave a half file under the real name: they land
  in a folder beside the staging folder (:func:`partial_dir`), where no object key can reach, and
  are renamed only when complete; the folder goes when the download ends, however it ends.
* upload: hashes are cached by (path, size, mtime), so a periodic upload hashes a file once, not
  every round.

Nothing at the destination is ever deleted, and nothing is written outside it: a download whose
object keys would land outside the local root (``a/../../x``, ``data//abs/path``, a path through a
link out of the root) is refused before anything is written, and an upload never follows a link
out of its local root nor around a link loop (those are left out and named in the result).

An upload uploads every file it can: a file that fails (a name the store refuses, a file that
cannot be read) is left out with the reason and the others go on; a name the store cannot hold
(bytes that are not UTF-8, control characters) is uploaded under an escaped key (``%FF``,
``%0A``) and named in the result. Only an upload where every file failed raises.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import os
import posixpath
import shutil
import stat
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from fsspec.callbacks import Callback

from ascendify._fs import is_below, shown
from ascendify.storage._errors import (
    ChannelError,
    NoSpaceError,
    NoSuchKeyError,
    StorageError,
    UnsafeKeyError,
    translate,
)
from ascendify.storage._remote import S3Settings, bucket_of, is_remote, local_path, remote_path

PARTIAL_SUFFIX = ".ascendify-partial"
PART_SIZE = 50 * 2**20  # multipart part size we upload with, so our ETags can be recomputed
_READ_BLOCK = 2**20
_CLEANUP_WAIT = 5.0  # seconds for cancelled transfers to remove their partial files


@dataclass(frozen=True)
class CopyResult:
    """What one :func:`copy_tree` call did; paths are relative to the tree roots."""

    source: str
    destination: str
    copied: tuple[str, ...]
    skipped: tuple[str, ...]
    bytes_copied: int
    seconds: float
    left_out: tuple[str, ...] = ()  # local entries not uploaded, each with the reason
    renamed: tuple[str, ...] = ()  # local entries uploaded under an escaped key, and why

    def describe(self) -> str:
        return (
            f"{count(len(self.copied), 'file')} copied ({format_bytes(self.bytes_copied)}), "
            f"{len(self.skipped)} unchanged, {self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class _RemoteFile:
    path: str  # s3fs form: bucket/key
    size: int
    etag: str
    mtime_ns: int  # LastModified, stamped exactly on downloaded copies


def count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def format_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def _md5_part(stream: BinaryIO, limit: int | None) -> tuple[bytes, int]:
    """MD5 of the next ``limit`` bytes of ``stream`` (all of it if None) and how many there were."""
    digest = hashlib.md5(usedforsecurity=False)
    count = 0
    while limit is None or count < limit:
        block = stream.read(_READ_BLOCK if limit is None else min(_READ_BLOCK, limit - count))
        if not block:
            break
        digest.update(block)
        count += len(block)
    return digest.digest(), count


def s3_etag(path: Path, multipart: bool) -> str:
    """The ETag S3 gives ``path`` uploaded whole, or in :data:`PART_SIZE` parts if ``multipart``."""
    with path.open("rb") as stream:
        if not multipart:
            return _md5_part(stream, None)[0].hex()
        parts: list[bytes] = []
        while True:
            digest, count = _md5_part(stream, PART_SIZE)
            if count == 0:
                break
            parts.append(digest)
    return f"{hashlib.md5(b''.join(parts), usedforsecurity=False).hexdigest()}-{len(parts)}"


class ContentHashes:
    """S3-style ETags of local files, cached by (path, size, mtime_ns). Thread-safe."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int, bool], str] = {}
        self._lock = threading.Lock()

    def etag(self, path: Path, multipart: bool) -> str:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns, multipart)
        with self._lock:
            known = self._known.get(key)
        if known is None:
            known = s3_etag(path, multipart)
            with self._lock:
                self._known[key] = known
        return known


class _Advance(Callback):  # type: ignore[misc]  # fsspec is untyped
    """Forwards fsspec's per-chunk byte counts to a progress bar."""

    def __init__(self, advance: Callable[[int], None]) -> None:
        super().__init__()
        self._advance = advance

    def relative_update(self, inc: int = 1) -> None:
        self._advance(inc)


@contextmanager
def _progress(enabled: bool, label: str, total: int) -> Iterator[Callable[[int], None]]:
    """A byte-counting progress bar on stderr when ``enabled``; yields the ``advance`` function."""
    if not enabled:
        yield lambda _: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda size: bar.advance(task, size)


def _nanoseconds(moment: datetime) -> int:
    """Exact epoch nanoseconds of an aware datetime (float seconds would round)."""
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def _remote_files(fs: Any, root: str) -> dict[str, _RemoteFile]:
    """Objects under ``root`` (a key or a prefix) by relative path (a key: its name)."""
    found: dict[str, _RemoteFile] = {}
    for path, info in fs.find(root, detail=True).items():
        if info.get("type") != "file" or path.endswith("/"):
            continue  # "directory" placeholder objects
        if path == root:
            relative = posixpath.basename(path)
        elif path.startswith(root + "/"):
            relative = path[len(root) + 1 :]
        else:
            continue
        modified = info.get("LastModified")
        found[relative] = _RemoteFile(
            path=path,
            size=int(info["size"]),
            etag=str(info.get("ETag", "")).strip('"'),
            mtime_ns=_nanoseconds(modified) if modified is not None else 0,
        )
    return found


def _local_files(root: Path) -> tuple[dict[str, tuple[Path, int]], list[str]]:
    """Regular files under ``root`` with their sizes, and what was left out and why.

    Links are followed only while they stay inside ``root`` and do not lead back to a directory
    being walked (a loop); files that vanish while we look are left out silently.
    """
    top = os.path.realpath(root)
    found: dict[str, tuple[Path, int]] = {}
    left_out: list[str] = []
    pending: list[tuple[str, str, tuple[str, ...]]] = [(str(root), "", (top,))]
    while pending:
        directory, prefix, walked = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except FileNotFoundError:
            continue
        except OSError as error:
            left_out.append(f"{shown(prefix or './')}: cannot be read ({error.strerror})")
            continue
        for entry in entries:
            relative = prefix + entry.name
            real = os.path.realpath(entry.path)
            link = entry.is_symlink()
            if link and not is_below(Path(top), Path(real)):
                left_out.append(f"{shown(relative)}: a link to {shown(real)}, outside {root}")
                continue
            try:
                info = os.stat(entry.path)
            except FileNotFoundError:
                if link:
                    left_out.append(f"{shown(relative)}: a link to nothing ({shown(real)})")
                continue
            except OSError as error:
                left_out.append(f"{shown(relative)}: {error.strerror} (a link loop)")
                continue
            if stat.S_ISDIR(info.st_mode):
                if real in walked:
                    left_out.append(f"{shown(relative)}: a link back to {shown(real)} (a loop)")
                else:
                    pending.append((entry.path, relative + "/", (*walked, real)))
            elif stat.S_ISREG(info.st_mode):
                found[relative] = (Path(entry.path), info.st_size)
            else:
                left_out.append(f"{shown(relative)}: not a regular file")
    return found, sorted(left_out)


def partial_dir(local_root: Path) -> Path:
    """Where downloads into ``local_root`` land until complete: beside it, never inside it, so
    no object key (``x.ascendify-partial`` included) names a partial file and no rank sees one."""
    root = local_root.absolute()
    return root.parent / f".{root.name}{PARTIAL_SUFFIX}"


def object_name(relative: str) -> tuple[str, str | None]:
    """The key (below the channel's prefix) for a local ``relative`` path, and why it differs.

    Object keys are UTF-8 and a listing cannot carry control characters: bytes of a name that
    are not UTF-8 (kept by Python as surrogates) and control characters become ``%XX``.
    """
    escaped: list[str] = []
    reasons: set[str] = set()
    for char in relative:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            escaped.append(f"%{code - 0xDC00:02X}")
            reasons.add("is not UTF-8")
        elif code < 0x20 or code == 0x7F:
            escaped.append(f"%{code:02X}")
            reasons.add("holds a control character")
        else:
            escaped.append(char)
    if not reasons:
        return relative, None
    return "".join(escaped), f"its name {' and '.join(sorted(reasons))}"


def _staged_path(local_root: Path, relative: str, remote: _RemoteFile) -> Path:
    """Where ``remote`` lands: inside ``local_root`` after resolving, or the key is refused."""
    top = os.path.realpath(local_root)
    target = os.path.realpath(os.path.join(top, relative))
    if not is_below(Path(top), Path(target)):
        raise UnsafeKeyError(
            f"object key {remote.path.partition('/')[2]!r} (in bucket "
            f"{remote.path.partition('/')[0]!r}) would be written to {target}, outside the "
            f"staging directory {local_root}: nothing was downloaded"
        )
    return Path(target)


def _check_space(local_root: Path, remote: dict[str, _RemoteFile]) -> None:
    """Fail before downloading if the files still missing cannot fit on the local disk."""
    needed = 0
    for relative, item in remote.items():
        try:
            needed += max(0, item.size - (local_root / relative).stat().st_size)
        except FileNotFoundError:
            needed += item.size
    existing = next(p for p in (local_root, *local_root.parents) if p.exists())
    free = shutil.disk_usage(existing).free
    if needed > free:
        raise NoSpaceError(
            f"{local_root} needs {format_bytes(needed)} more for the download "
            f"but its disk has {format_bytes(free)} free"
        )


async def _etag(hashes: ContentHashes, path: Path, multipart: bool) -> str:
    """Hash off the event loop, which keeps serving the other transfers meanwhile."""
    return await asyncio.to_thread(hashes.etag, path, multipart)


async def _downloaded_before(remote: _RemoteFile, target: Path, hashes: ContentHashes) -> bool:
    try:
        stat = target.stat()
    except FileNotFoundError:
        return False
    if stat.st_size != remote.size:
        return False
    if stat.st_mtime_ns == remote.mtime_ns:
        return True
    if await _etag(hashes, target, multipart="-" in remote.etag) != remote.etag:
        return False
    os.utime(target, ns=(remote.mtime_ns, remote.mtime_ns))  # next time the stamp suffices
    return True


async def _download(
    fs: Any,
    remote: _RemoteFile,
    target: Path,
    incomplete: Path,
    *,
    hashes: ContentHashes,
    advance: Callable[[int], None],
) -> bool:
    """Fetch ``remote`` to ``target`` (by way of ``incomplete``) unless it is there; True if it did."""
    if await _downloaded_before(remote, target, hashes):
        advance(remote.size)
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        await fs._get_file(remote.path, str(incomplete), callback=_Advance(advance))
        os.replace(incomplete, target)
    finally:
        incomplete.unlink(missing_ok=True)
    os.utime(target, ns=(remote.mtime_ns, remote.mtime_ns))
    return True


async def _upload(
    fs: Any,
    source: Path,
    key: str,
    *,
    remote: _RemoteFile | None,
    hashes: ContentHashes,
    advance: Callable[[int], None],
) -> bool:
    """Put ``source`` at ``key`` unless the object there has the same content; True if it did."""
    try:
        if (
            remote is not None
            and remote.size == source.stat().st_size
            and await _etag(hashes, source, multipart="-" in remote.etag) == remote.etag
        ):
            advance(remote.size)
            return False
        await fs._put_file(str(source), key, callback=_Advance(advance), chunksize=PART_SIZE)
    except FileNotFoundError:
        if source.exists():
            raise  # the remote side is missing, not the file
        return False  # deleted while we worked (a rotated checkpoint): nothing left to keep
    return True


def check_bucket(fs: Any, url: str, settings: S3Settings) -> None:
    """Raise the specific :class:`StorageError` if the bucket of ``url`` is missing or unusable."""
    try:
        fs.call_s3("head_bucket", Bucket=bucket_of(url))
    except Exception as error:
        raise translate(
            error,
            url,
            endpoint=settings.endpoint_url,
            secrets=settings.secrets(),
            bucket_probe=True,
        ) from error


def _run_parallel(
    fs: Any, jobs: Sequence[Callable[[], Awaitable[bool | None]]], workers: int
) -> list[bool | None]:
    """Run ``jobs`` on the filesystem's event loop, ``workers`` at a time, and wait for them.

    s3fs is asynchronous underneath; running the transfers as coroutines on its loop avoids a
    thread hop per file. The first failure cancels the rest and lets them clean up; so does an
    exception in the waiting thread (a stop signal's handler), which then waits a moment for it.
    """
    finished = threading.Event()

    async def run_all() -> list[bool | None]:
        limit = asyncio.Semaphore(max(1, workers))

        async def one(job: Callable[[], Awaitable[bool | None]]) -> bool | None:
            async with limit:
                return await job()

        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            finished.set()

    running = asyncio.run_coroutine_threadsafe(run_all(), fs.loop)
    try:
        while True:
            try:
                return running.result(timeout=1.0)  # short waits: a signal handler gets to run
            except concurrent.futures.TimeoutError:
                continue
    except BaseException:
        running.cancel()
        finished.wait(_CLEANUP_WAIT)
        raise


@dataclass(frozen=True)
class _Transfer:
    """One file to copy unless unchanged; ``run(advance=...)`` does it and says if bytes moved."""

    relative: str
    size: int
    run: Callable[..., Awaitable[bool]]


@dataclass(frozen=True)
class _Plan:
    transfers: list[_Transfer]
    left_out: list[str]
    renamed: list[str]


def _download_plan(fs: Any, remote_url: str, local_root: Path, hashes: ContentHashes) -> _Plan:
    remote = _remote_files(fs, remote_path(remote_url))
    if not remote:
        raise NoSuchKeyError(f"no object or prefix {remote_url} to download")
    # Every key is checked before anything is written: one bad key stops the whole staging.
    targets = {
        relative: _staged_path(local_root, relative, item) for relative, item in remote.items()
    }
    local_root.mkdir(parents=True, exist_ok=True)
    partials = partial_dir(local_root)
    shutil.rmtree(partials, ignore_errors=True)  # left by a run that was killed outright
    partials.mkdir()
    _check_space(local_root.absolute(), remote)
    transfers = [
        _Transfer(
            relative,
            item.size,
            partial(_download, fs, item, targets[relative], partials / str(index), hashes=hashes),
        )
        for index, (relative, item) in enumerate(remote.items())
    ]
    return _Plan(transfers, [], [])


def _upload_plan(fs: Any, remote_url: str, local_root: Path, hashes: ContentHashes) -> _Plan:
    root = remote_path(remote_url)
    remote = _remote_files(fs, root)
    files, left_out = _local_files(local_root)
    taken = set(files)
    transfers: list[_Transfer] = []
    renamed: list[str] = []
    for relative, (path, size) in sorted(files.items()):
        key, why = object_name(relative)
        if why is not None:
            if key in taken:
                left_out.append(f"{shown(relative)}: {why}, and its escaped key {key} is taken")
                continue
            taken.add(key)
            renamed.append(f"{shown(relative)}: uploaded as {key} ({why})")
        upload = partial(_upload, fs, path, f"{root}/{key}", remote=remote.get(key), hashes=hashes)
        transfers.append(_Transfer(relative, size, upload))
    return _Plan(transfers, sorted(left_out), renamed)


async def _kept_going(
    transfer: _Transfer, advance: Callable[[int], None], failures: dict[str, Exception]
) -> bool | None:
    """One upload whose failure is noted (None) instead of stopping the others."""
    try:
        return bool(await transfer.run(advance=advance))
    except Exception as error:
        failures[transfer.relative] = error
        return None


def copy_tree(
    src_url: str,
    dst_url: str,
    *,
    settings: S3Settings | None = None,
    workers: int = 64,
    progress: bool | None = None,
    hashes: ContentHashes | None = None,
    label: str | None = None,
) -> CopyResult:
    """Copy the tree at ``src_url`` to ``dst_url``, one of them ``s3://``/``obs://``, one local.

    Files already at the destination with the same content are skipped (see the module docstring);
    nothing at the destination is deleted. ``settings`` default to the process environment;
    ``workers`` transfers run at once; ``progress`` defaults to "stderr is a terminal"; pass one
    ``hashes`` to repeated uploads of the same tree. Raises a :class:`StorageError` naming the
    cause; a download of a URL with no objects raises :class:`NoSuchKeyError`, one with a key that
    would land outside ``dst_url`` raises :class:`UnsafeKeyError` before anything is written. An
    upload leaves out links out of ``src_url``, link loops, non-regular files and files that fail
    (:attr:`CopyResult.left_out` names them, with why) and escapes names the store cannot hold
    (:attr:`CopyResult.renamed`); it raises only when no file could be uploaded.
    """
    settings = settings or S3Settings.from_env(os.environ)
    downloading = is_remote(src_url)
    if downloading == is_remote(dst_url):
        raise ChannelError(
            "copy_tree copies between object storage and a local directory, "
            f"not {src_url} -> {dst_url}"
        )
    remote_url, local = (src_url, dst_url) if downloading else (dst_url, src_url)
    local_root = Path(local_path(local))
    check_bucket(settings.filesystem(probe=True), remote_url, settings)
    fs = settings.filesystem()
    started = time.perf_counter()
    failures: dict[str, Exception] = {}

    def explain(error: Exception) -> StorageError:
        if isinstance(error, StorageError):
            return error
        return translate(
            error, remote_url, endpoint=settings.endpoint_url, secrets=settings.secrets()
        )

    try:
        plan = (_download_plan if downloading else _upload_plan)(
            fs, remote_url, local_root, hashes or ContentHashes()
        )
        show = sys.stderr.isatty() if progress is None else progress
        with _progress(show, label or remote_url, sum(t.size for t in plan.transfers)) as advance:
            jobs = [
                partial(t.run, advance=advance)
                if downloading
                else partial(_kept_going, t, advance, failures)
                for t in plan.transfers
            ]
            moved = _run_parallel(fs, jobs, workers)
    except Exception as error:
        raise explain(error) from error
    finally:
        if downloading:
            shutil.rmtree(partial_dir(local_root), ignore_errors=True)
    if failures and len(failures) == len(plan.transfers):
        first = next(iter(failures.values()))
        raise explain(first) from first  # nothing could be uploaded: the store is unusable
    done = list(zip(plan.transfers, moved, strict=True))
    copied = [t for t, did in done if did]
    failed = [f"{shown(name)}: {explain(error)}" for name, error in sorted(failures.items())]
    return CopyResult(
        source=src_url,
        destination=dst_url,
        copied=tuple(t.relative for t in copied),
        skipped=tuple(t.relative for t, did in done if did is False),
        bytes_copied=sum(t.size for t in copied),
        seconds=time.perf_counter() - started,
        left_out=(*plan.left_out, *failed),
        renamed=tuple(plan.renamed),
    )
