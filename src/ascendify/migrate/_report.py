"""What a run leaves behind: ``change_list.csv``, the rotating log, and the console summary."""

from __future__ import annotations

import io
import logging
import logging.handlers
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ascendify._fs import WriteError, open_log, shown
from ascendify.migrate._engine import SkipReason
from ascendify.migrate._rule import Operation, iter_rules
from ascendify.migrate._tree import FileOutcome, TreeResult
from ascendify.tabular import write_csv, write_xlsx

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


def _rows(
    result: TreeResult, operations: frozenset[Operation] | None = None
) -> list[tuple[str, ...]]:
    """Change rows ordered by file and original line (all operations, or only those given)."""
    rows = [
        (file, str(change.start_line), str(change.end_line), change.operation.value,
         change.message, change.code, change.safety.value)
        for file, change in result.changes
        if operations is None or change.operation in operations
    ]  # fmt: skip
    return sorted(rows, key=lambda row: (row[0], int(row[1]), int(row[2]), row[5]))


def write_change_list(result: TreeResult, path: Path) -> int:
    """One row per change, ordered by file and original line; returns the number of rows."""
    rows = _rows(result)
    write_csv(path, CHANGE_LIST_HEADER, rows)
    return len(rows)


def write_unsupported(result: TreeResult, directory: Path) -> int:
    """``unsupported_op.csv`` and ``.xlsx``: what was left in place for a human to port."""
    rows = _rows(result, _LEFT_IN_PLACE)
    write_csv(directory / f"{UNSUPPORTED}.csv", CHANGE_LIST_HEADER, rows)
    write_xlsx(directory / f"{UNSUPPORTED}.xlsx", CHANGE_LIST_HEADER, rows, sheet="unsupported")
    return len(rows)


class _LogHandler(logging.handlers.RotatingFileHandler):
    """Rotates like its base class, but opens the file without following a link and keeps the
    first write error for :meth:`RunLog.close` instead of printing a traceback per record."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.error: BaseException | None = None
        super().__init__(directory / LOG_FILE, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS)

    def _open(self) -> io.TextIOWrapper:
        return open_log(Path(self.baseFilename), self.directory)

    def handleError(self, record: logging.LogRecord) -> None:
        self.error = self.error or sys.exc_info()[1]


class RunLog:
    """The rotating ``msFmkTranspltlog.txt`` (1 MiB x 10), or nowhere when previewing."""

    def __init__(self, directory: Path | None) -> None:
        self._logger = logging.getLogger(f"ascendify.migrate.run.{id(self)}")
        self._logger.propagate = False
        self._logger.setLevel(logging.INFO)
        self._file = None if directory is None else _LogHandler(directory)
        self._handler: logging.Handler = self._file or logging.NullHandler()
        if self._file is not None:
            self._file.setFormatter(
                logging.Formatter("%(asctime)s [%(levelname)s] %(message)s", "%Y-%m-%d %H:%M:%S")
            )
        self._logger.addHandler(self._handler)

    def info(self, message: str) -> None:
        self._logger.info(message)

    def warning(self, message: str) -> None:
        self._logger.warning(message)

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

    def close(self) -> None:
        self._logger.removeHandler(self._handler)
        self._handler.close()

    def check(self) -> None:
        """A write that failed on the way is a :class:`~ascendify._fs.WriteError` now."""
        if self._file is not None and self._file.error is not None:
            detail = getattr(self._file.error, "strerror", None) or self._file.error
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
    rows = (
        ("Python files scanned", len(result.files)),
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
