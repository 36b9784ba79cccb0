"""What a run leaves behind: ``change_list.csv``, the rotating log, and the console summary."""

from __future__ import annotations

import io
import os
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascendify._fs import WriteError, open_log, shown
from ascendify.migrate._engine import SkipReason
from ascendify.migrate._registry import iter_rules
from ascendify.migrate._rule import Change, Operation
from ascendify.migrate._tree import CompanionFinding, FileOutcome, TreeResult
from ascendify.tabular import Row, write_csv, write_xlsx
from ascendify.targets import Safety

CHANGE_LIST = "change_list.csv"
LOG_FILE = "msFmkTranspltlog.txt"
UNSUPPORTED = "unsupported_op"  # .csv and .xlsx
LOG_MAX_BYTES = 1024 * 1024
LOG_BACKUPS = 10
REPORT_NAMES = frozenset(
    {CHANGE_LIST, f"{UNSUPPORTED}.csv", f"{UNSUPPORTED}.xlsx", LOG_FILE}
    | {f"{LOG_FILE}.{backup}" for backup in range(1, LOG_BACKUPS + 1)}
)
CHANGE_LIST_HEADER = (
    "File", "Start Line", "End Line", "Operation Type", "Message", "Rule", "Safety",
)  # fmt: skip
_NOT_PARSED = SkipReason.NO_TRIGGER.value
_LEFT_IN_PLACE = frozenset({Operation.UNSUPPORTED, Operation.ADVICE})


def _rows(result: TreeResult, operations: frozenset[Operation] | None = None) -> list[Row]:
    """Change rows ordered by file and original line (all operations, or only those given)."""
    rows: list[Row] = [
        (file, change.start_line, change.end_line, change.operation.value,
         change.message, change.code, change.safety.value)
        for file, change in result.changes
        if operations is None or change.operation in operations
    ]  # fmt: skip
    return sorted(rows, key=_row_order)


def _row_order(row: Row) -> tuple[str, int, int, str]:
    file, start, end, _, _, code, _ = row
    return (str(file), int(start), int(end), str(code))


def write_change_list(result: TreeResult, path: Path) -> int:
    """One row per change, ordered by file and original line; returns the number of rows."""
    rows = _rows(result)
    write_csv(path, CHANGE_LIST_HEADER, rows)
    return len(rows)


def write_unsupported(
    result: TreeResult, directory: Path, found: Sequence[CompanionFinding] = ()
) -> int:
    """``unsupported_op.csv`` and ``.xlsx``: what was left in place for a human to port, each call
    once, in its state after the migration: what the rules left in place, and what the companion
    (the analysis) found that the migration neither changed nor reported itself."""
    rows = _rows(result, _LEFT_IN_PLACE)
    handled = _changes_by_file(result)
    rows += [
        (finding.file, finding.start_line, finding.end_line,
         (Operation.UNSUPPORTED if finding.unsupported else Operation.ADVICE).value,
         f"{finding.op}: {finding.tips}", finding.code, Safety.REPORT_ONLY.value)
        for finding in found
        if not _same_call(finding, handled.get(finding.file, ()))
    ]  # fmt: skip
    rows.sort(key=_row_order)
    write_csv(directory / f"{UNSUPPORTED}.csv", CHANGE_LIST_HEADER, rows)
    write_xlsx(directory / f"{UNSUPPORTED}.xlsx", CHANGE_LIST_HEADER, rows, sheet="unsupported")
    return len(rows)


def _changes_by_file(result: TreeResult) -> dict[str, list[Change]]:
    """Every change that is about a call (insertions are lines added, about none), by file."""
    by_file: dict[str, list[Change]] = {}
    for file, change in result.changes:
        if change.operation is not Operation.INSERT:
            by_file.setdefault(file, []).append(change)
    return by_file


def _same_call(finding: CompanionFinding, changes: Sequence[Change]) -> bool:
    """Whether one of the file's changes is about the finding's call: on its line, naming it."""
    return any(
        change.start_line <= finding.start_line <= change.end_line and finding.op in change.message
        for change in changes
    )


class RunLog:
    """The rotating ``msFmkTranspltlog.txt`` (1 MiB x 10, rotated as the logging module's rotating
    handler does), or nowhere when previewing.

    Written here rather than through ``logging``: its rotating handler formats every record twice
    and asks the disk about the file once per record, which cost a large project's run more than
    all its reports. Lines are flushed at most once a second (a ``tail -f`` still follows the run)
    and when the log closes. The first write error is kept for :meth:`check`.
    """

    def __init__(self, directory: Path | None) -> None:
        self._directory = directory
        self._stream = None if directory is None else open_log(directory / LOG_FILE, directory)
        self._size = 0 if self._stream is None else self._stream.tell()  # bytes in the file
        self._second = -1  # the second of the last timestamp made, flushed at its end
        self._stamp = ""
        self.error: BaseException | None = None

    def info(self, message: str) -> None:
        self._write("INFO", message)

    def warning(self, message: str) -> None:
        self._write("WARNING", message)

    def file(self, outcome: FileOutcome) -> None:
        if outcome.status == "not copied":
            self.warning(f"{outcome.path}: not copied: {outcome.detail}")
        elif _copied_unchanged(outcome):
            self.warning(f"{outcome.path}: copied unchanged: {outcome.detail}")
        for change in outcome.changes:
            self.info(
                f"{outcome.path} line: {change.start_line} ~ {change.end_line} "
                f"Operation Type: {change.operation.value} Message: {change.message} "
                f"[{change.code} {change.safety.value}]"
            )

    def _write(self, level: str, message: str) -> None:
        if self._stream is None or self.error is not None:
            return
        line = f"{self._timestamp()} [{level}] {message}\n"
        size = len(line) if line.isascii() else len(line.encode("utf-8", "backslashreplace"))
        try:
            if self._size and self._size + size >= LOG_MAX_BYTES:
                self._stream = self._rotated(self._stream)
                self._size = 0
            self._stream.write(line)
            self._size += size
        except (OSError, WriteError) as error:
            self.error = error

    def _timestamp(self) -> str:
        now = time.time()
        if int(now) != self._second:
            self._second = int(now)
            self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
            if self._stream is not None:
                self._stream.flush()
        return self._stamp

    def _rotated(self, stream: io.TextIOWrapper) -> io.TextIOWrapper:
        """The current file becomes ``.1``, ``.1`` becomes ``.2``, ... (the oldest is dropped);
        a new file is opened. Renames replace names, never following a link."""
        assert self._directory is not None
        stream.close()
        base = self._directory / LOG_FILE
        for backup in range(LOG_BACKUPS - 1, 0, -1):
            older = base.with_name(f"{LOG_FILE}.{backup}")
            if older.is_symlink() or older.exists():
                os.replace(older, base.with_name(f"{LOG_FILE}.{backup + 1}"))
        os.replace(base, base.with_name(f"{LOG_FILE}.1"))
        return open_log(base, self._directory)

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except OSError as error:
                self.error = self.error or error
            self._stream = None

    def check(self) -> None:
        """A write that failed on the way is a :class:`~ascendify._fs.WriteError` now."""
        if self.error is not None:
            detail = getattr(self.error, "strerror", None) or self.error
            raise WriteError(f"cannot write {LOG_FILE}: {detail}")


def _copied_unchanged(outcome: FileOutcome) -> bool:
    """Failed, or skipped for a reason other than holding no CUDA idiom: worth a look."""
    return outcome.status == "failed" or (
        outcome.status == "skipped" and outcome.detail != _NOT_PARSED
    )


def log_tree(log: RunLog, result: TreeResult) -> None:
    """Tree-level facts: links kept as links, files that could not be copied."""
    for link in result.plan.links:
        if link.outside:
            log.warning(
                f"{link.path}: symlink to {link.target} points outside the input; kept as a link, not followed"
            )
    for rel, reason in result.plan.not_copied:
        log.warning(f"{rel}: not copied: {reason}")


def print_summary(result: TreeResult, console: Console) -> None:
    """The closing table: files by outcome, changes by rule, and every file that needs a look."""
    files = Table(title="ascendify migrate", show_header=True)
    files.add_column("files")
    files.add_column("count", justify="right")
    skipped = result.with_status("skipped")
    configs = len(result.plan.config_files)
    rows = (
        ("Python files scanned", len(result.files) - configs),
        ("config files read (YAML, JSON, shell)", configs),
        ("changed", len(result.with_status("changed"))),
        ("unchanged", len(result.with_status("unchanged"))),
        ("without CUDA idioms (not parsed)", sum(o.detail == _NOT_PARSED for o in skipped)),
        ("skipped (too large)", sum(o.detail != _NOT_PARSED for o in skipped)),
        ("failed (copied unchanged)", len(result.with_status("failed"))),
        ("not copied (unreadable)", len(result.with_status("not copied"))),
        ("other files copied", len(result.plan.other_files)),
        ("symlinks kept", len(result.plan.links)),
    )
    for label, count in rows:
        files.add_row(label, str(count))
    console.print(files)
    counts = Counter(change.code for _, change in result.changes)
    if counts:
        rules = Table(show_header=True)
        for column in ("rule", "safety", "count", "what"):
            rules.add_column(column, justify="right" if column == "count" else "left")
        for rule in iter_rules(mode=None):
            if counts[rule.code]:
                rules.add_row(rule.code, rule.safety.value, str(counts[rule.code]), rule.summary)
        console.print(rules)
    for outcome in result.files:
        if outcome.status == "not copied":
            _warn(console, "not copied", f"{outcome.path}: {outcome.detail}")
        elif _copied_unchanged(outcome):
            _warn(console, "copied unchanged", f"{outcome.path}: {outcome.detail}")
    for link in result.plan.links:
        if link.outside:
            _warn(console, "symlink kept, not followed", f"{link.path} -> {link.target}")
    for rel, reason in result.plan.not_copied:
        _warn(console, "not copied", f"{rel}: {reason}")


def _warn(console: Console, label: str, text: str) -> None:
    # One line whatever the width, so that a log or a grep sees every file name whole.
    console.print(
        f"[yellow]{label}[/yellow] {escape(shown(text))}", highlight=False, soft_wrap=True
    )
