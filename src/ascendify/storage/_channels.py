"""The effects of a channel plan: stage inputs before a job, upload outputs during and after it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ascendify.storage._copy import (
    ContentHashes,
    CopyResult,
    check_bucket,
    copy_tree,
    count,
    format_bytes,
)
from ascendify.storage._errors import NoSuchKeyError, StorageError, translate
from ascendify.storage._plan import Channel, ChannelPlan
from ascendify.storage._remote import remote_path

Log = Callable[[str], None]


@dataclass
class UploadHistory:
    """Every upload round of one output channel."""

    channel: Channel
    rounds: list[CopyResult] = field(default_factory=list)
    hashes: ContentHashes = field(default_factory=ContentHashes)
    warned: set[str] = field(default_factory=set)  # report lines already logged

    def record(self, result: CopyResult) -> list[str]:
        """Add a round; return its report lines (left out, renamed) no earlier round gave."""
        self.rounds.append(result)
        lines = [f"not uploaded: {entry}" for entry in result.left_out] + list(result.renamed)
        new = [line for line in lines if line not in self.warned]
        self.warned.update(new)
        return new

    def summary(self) -> str:
        uploaded = {name for result in self.rounds for name in result.copied}
        size = sum(result.bytes_copied for result in self.rounds)
        final = self.rounds[-1] if self.rounds else None
        unchanged = f", {len(final.skipped)} already up to date at the end" if final else ""
        if final and final.left_out:
            unchanged += f", {len(final.left_out)} left out (named above)"
        return (
            f"{self.channel.name}: uploaded {count(len(uploaded), 'file')} ({format_bytes(size)}) "
            f"in {count(len(self.rounds), 'round')} to {self.channel.url}{unchanged}"
        )


class JobChannels:
    """Context manager that makes the remote channels of ``plan`` local for the length of a job.

    Enter: checks every remote location first (so a wrong bucket, credential or endpoint raises a
    :class:`StorageError` before anything is downloaded or started), creates the staging dirs,
    downloads the inputs and starts uploading the outputs every ``upload_interval`` seconds
    (0 turns the periodic upload off). Exit: stops that, uploads the outputs a last time whether
    the body succeeded or raised, and logs a summary. A failing final upload is raised unless the
    body already raised (then it is logged and the body's exception goes on).
    """

    def __init__(
        self,
        plan: ChannelPlan,
        *,
        upload_interval: float,  # the launcher's --upload-interval (its default is there)
        log: Log = print,
        progress: bool | None = None,
        workers: int = 64,
    ) -> None:
        self.plan = plan
        self.upload_interval = upload_interval
        self.downloads: dict[str, CopyResult] = {}
        self.uploads = {c.name: UploadHistory(c) for c in plan.remote_outputs}
        self._log = log
        self._progress = progress
        self._workers = workers
        self._stop = threading.Event()
        self._round_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def argv(self) -> list[str]:
        """The command to run: remote channel arguments point at the local dirs."""
        return list(self.plan.argv)

    def __enter__(self) -> JobChannels:
        self._check_remotes()
        when = (
            f"uploaded every {self.upload_interval:g} s and at the end"
            if self.upload_interval > 0
            else "uploaded at the end"
        )
        # Input dirs are made by the download, once every object key is known to stay inside.
        for channel in self.plan.remote_outputs:
            os.makedirs(channel.local_dir, exist_ok=True)
            self._log(f"ascendify: {channel.name}: {channel.local_dir} -> {channel.url}: {when}")
        for channel in self.plan.remote_inputs:
            result = self._copy(channel.url, channel.local_dir, channel.name, self._progress)
            self.downloads[channel.name] = result
            self._log(
                f"ascendify: {channel.name}: {channel.url} -> {channel.local_dir}: "
                f"{result.describe()}"
            )
        if self.uploads and self.upload_interval > 0:
            self._thread = threading.Thread(
                target=self._upload_periodically, name="ascendify-upload", daemon=True
            )
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.upload_outputs(progress=self._progress)
        except StorageError as error:
            if exc is None:
                raise
            self._log(f"ascendify: final upload failed: {error}")
        finally:
            for history in self.uploads.values():
                self._log(f"ascendify: {history.summary()}")

    def upload_outputs(self, progress: bool | None = False) -> None:
        """One upload round of every remote output (the periodic rounds show no progress bar).

        Every channel is tried even if one fails; then the failures are raised together.
        """
        failures: list[StorageError] = []
        with self._round_lock:
            for history in self.uploads.values():
                channel = history.channel
                try:
                    result = self._copy(
                        channel.local_dir, channel.url, channel.name, progress, history.hashes
                    )
                except StorageError as error:
                    failures.append(error)
                else:
                    for line in history.record(result):
                        self._log(f"ascendify: {channel.name}: {line}")
        if failures:
            raise type(failures[0])("; ".join(map(str, failures)))

    def _upload_periodically(self) -> None:
        while not self._stop.wait(self.upload_interval):
            try:
                self.upload_outputs()
            except StorageError as error:
                # A transient failure must not end the job; the next round or the final one retries.
                self._log(f"ascendify: periodic upload failed, will retry: {error}")

    def _check_remotes(self) -> None:
        remote = (*self.plan.remote_inputs, *self.plan.remote_outputs)
        if not remote:
            return
        settings = self.plan.settings
        fs = settings.filesystem(probe=True)  # a silent store is found here, quickly
        for channel in remote:
            check_bucket(fs, channel.url, settings)
        for channel in self.plan.remote_inputs:
            if not self._exists(fs, channel):
                raise NoSuchKeyError(
                    f"{channel.name}: no object or prefix {channel.url} to download"
                )

    def _exists(self, fs: Any, channel: Channel) -> bool:
        settings = self.plan.settings
        try:
            return bool(fs.exists(remote_path(channel.url)))
        except Exception as error:
            raise translate(
                error, channel.url, endpoint=settings.endpoint_url, secrets=settings.secrets()
            ) from error

    def _copy(
        self,
        src: str,
        dst: str,
        label: str,
        progress: bool | None,
        hashes: ContentHashes | None = None,
    ) -> CopyResult:
        return copy_tree(
            src,
            dst,
            settings=self.plan.settings,
            workers=self._workers,
            progress=progress,
            hashes=hashes,
            label=label,
        )
