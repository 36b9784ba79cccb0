"""``analyze -i`` with what ``migrate`` would do: the unsafe edits of a plain migration, by rule.

The migration runs as a preview (nothing written) and the static analysis rides on its pass, as it
does inside ``migrate`` (:class:`~ascendify.analyze.static.StaticAnalysis`): each file is read and
parsed once for both. An unsafe edit is applied by ``migrate`` but may change results, so the
report names each one and the console counts them by rule with the command that shows them.
"""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path
from typing import Any

from ascendify._fs import resolved, shown
from ascendify.analyze.report import AnalysisResult
from ascendify.analyze.static import FileAnalysis, StaticAnalysis, analyze_path
from ascendify.targets import Safety

# report.json's key for them (the console and the docs name it).
REPORT_KEY = "unsafe_edits"


def analyze_with_migration(source: Path, version: str | None, jobs: int) -> AnalysisResult:
    """The static analysis of the project folder ``source``, with the unsafe edits a plain
    ``ascendify migrate -i SOURCE`` would make in its details (:data:`REPORT_KEY`)."""
    from ascendify.migrate import Options, Settings, migrate_tree, plan_tree, reserved_names
    from ascendify.targets import resolve_version

    settings = Settings(torch_npu_version=resolve_version(version))
    options = Options(
        source=source,
        output=None,
        settings=settings,
        jobs=jobs,
        check=True,  # a preview: nothing is written
        companion=StaticAnalysis(settings.torch_npu_version),
    )
    plan = plan_tree(source, reserved_names(options), settings.max_bytes)
    migration = migrate_tree(options, None, plan)
    prepared = {
        outcome.path: outcome.inspected
        for outcome in migration.files
        if isinstance(outcome.inspected, FileAnalysis)
    }
    result = analyze_path(source, settings.torch_npu_version, jobs=jobs, prepared=prepared)
    edits = [
        {
            "file": outcome.path,
            "start_line": change.start_line,
            "end_line": change.end_line,
            "rule": change.code,
            "message": change.message,
        }
        for outcome in migration.files
        for change in outcome.changes
        if change.safety is Safety.UNSAFE
    ]
    counts = Counter(edit["rule"] for edit in edits)
    result.details[REPORT_KEY] = {
        "command": see_command(source),
        "by_rule": {code: counts[code] for code in _summaries() if counts[code]},
        "edits": edits,
    }
    return result


def see_command(source: Path) -> str:
    """What prints the edits themselves: the migration's diff, written nowhere."""
    return f"ascendify migrate -i {shlex.quote(str(resolved(source)))} --diff"


def print_unsafe(details: dict[str, Any], report: Path) -> None:
    """The unsafe edits by rule and how to see them; nothing when there are none."""
    from ascendify._console import console as pipe_safe_console

    found = details.get(REPORT_KEY)
    if not found or not found["edits"]:
        return
    console = pipe_safe_console(highlight=False)
    summaries = _summaries()
    console.print(
        f"migrate would make {len(found['edits'])} unsafe edit(s), applied but results may "
        "differ (check each): "
        + ", ".join(f"{code} {summaries[code]}: {n}" for code, n in found["by_rule"].items()),
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"see them: {found['command']} (the edits), or each with its line and why in "
        f"{shown(report)} ({REPORT_KEY})",
        markup=False,
        soft_wrap=True,
    )


def _summaries() -> dict[str, str]:
    """Every migration rule's code and one-line summary, in the rules' order."""
    from ascendify.migrate import iter_rules

    return {rule.code: rule.summary for rule in iter_rules(mode=None)}
