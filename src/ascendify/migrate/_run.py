"""One ``ascendify migrate`` run: the tree migration plus its log, reports and console output.

A run that fails or is interrupted leaves its result directory marked incomplete
(:data:`~ascendify.migrate._tree.INCOMPLETE_MARKER`) and says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ascendify._fs import make_dir, resolved, shown
from ascendify.errors import AscendifyError
from ascendify.migrate._report import (
    CHANGE_LIST,
    REPORT_NAMES,
    UNSUPPORTED,
    RunLog,
    log_tree,
    print_summary,
    write_change_list,
    write_unsupported,
)
from ascendify.migrate._tree import (
    INCOMPLETE_MARKER,
    Companion,
    CompanionFinding,
    FileOutcome,
    Options,
    TreePlan,
    TreeResult,
    finish_output,
    migrate_tree,
    plan_tree,
    prepare_output,
)
from ascendify.migrate.extras import extra_names, write_extras


def run_migration(options: Options, console: Console, status: Console) -> int:
    """Migrate, report, and return the exit code (1 under --check when something would change).

    ``console`` gets diffs (stdout); ``status`` gets the progress bar and the summary (stderr).
    """
    result_dir = prepare_output(options)
    try:
        result = _migrate_and_report(options, result_dir, status)
    except AscendifyError as error:
        if result_dir is None:
            raise
        raise AscendifyError(f"{error}; {_incomplete(result_dir)}") from error
    except KeyboardInterrupt:
        if result_dir is not None:
            status.print(
                f"interrupted; {shown(_incomplete(result_dir))}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        raise
    if options.diff:
        for outcome in result.files:
            if outcome.diff:
                console.out(shown(outcome.diff), end="", highlight=False)
    print_summary(result, status)
    changed = result.with_status("changed")
    if options.check:
        for outcome in changed:
            status.print(
                f"would change {escape(shown(outcome.path))}", highlight=False, soft_wrap=True
            )
    if result_dir is not None:
        status.print(f"result: {shown(result_dir)}", highlight=False, markup=False, soft_wrap=True)
    return 1 if options.check and changed else 0


def _migrate_and_report(options: Options, result_dir: Path | None, status: Console) -> TreeResult:
    plan = plan_tree(options.source, reserved_names(options), options.settings.max_bytes)
    reports = None if result_dir is None else result_dir / options.reports
    if result_dir is not None and options.reports:
        make_dir(result_dir / options.reports, result_dir)  # a real folder, never a link
    log = RunLog(reports)
    started = time.perf_counter()
    try:
        log.info(f"migrating {options.source} (torch_npu {options.settings.torch_npu_version})")
        result = _migrate_with_progress(options, result_dir, plan, status, log.file)
        log_tree(log, result)
        if reports is not None:
            rows = write_change_list(result, reports / CHANGE_LIST)
            log.info(f"{rows} changes written to {CHANGE_LIST}")
            for name in write_extras(options.settings.modes, result):
                log.info(f"wrote {name}")
            companion = options.companion
            found = (
                ()
                if companion is None
                else _write_companion(companion, options, reports, result, log)
            )
            left = write_unsupported(result, reports, found)
            log.info(f"{left} findings left in place written to {UNSUPPORTED}.csv/.xlsx")
        log.info(f"done in {time.perf_counter() - started:.2f}s")
    finally:
        log.close()
    log.check()
    if result_dir is not None:
        finish_output(resolved(options.source), result_dir)
    return result


def reserved_names(options: Options) -> frozenset[str]:
    """What the run writes at the top of the result: entries of SRC with these names are not mirrored."""
    companion = {options.companion.directory} if options.companion is not None else set()
    reports = frozenset({options.reports}) if options.reports else REPORT_NAMES | companion
    return reports | extra_names(options.settings.modes) | {INCOMPLETE_MARKER}


def _incomplete(result_dir: Path) -> str:
    return f"the result in {result_dir} is incomplete (marked by {INCOMPLETE_MARKER})"


def _write_companion(
    companion: Companion, options: Options, reports: Path, result: TreeResult, log: RunLog
) -> Sequence[CompanionFinding]:
    """The companion's reports (the analysis of the original project), kept beside the migration's;
    what it found that may be left for a human."""
    assert result.result_dir is not None
    folder = reports / companion.directory
    make_dir(folder, result.result_dir)  # a real folder of the result, never a link
    parts = {
        outcome.path: outcome.inspected for outcome in result.files if outcome.inspected is not None
    }
    said, found = companion.write(options.source, folder, parts, options.jobs)
    log.info(said)
    return found


def _migrate_with_progress(
    options: Options,
    result_dir: Path | None,
    plan: TreePlan,
    status: Console,
    record: Callable[[FileOutcome], None],
) -> TreeResult:
    if not status.is_terminal:
        return migrate_tree(options, result_dir, plan, record)
    with Progress(
        TextColumn("migrating"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=status, transient=True,
    ) as progress:  # fmt: skip
        task = progress.add_task("migrate", total=len(plan.python_files) + len(plan.config_files))

        def advance(outcome: FileOutcome) -> None:
            record(outcome)
            progress.advance(task)

        return migrate_tree(options, result_dir, plan, advance)
