"""The pure core: one file's bytes in, a :data:`FileResult` out. Never raises, never touches files.

Only the checkers and finishers of the rules the run applies take part (:func:`registry_for`, worked
out once per distinct settings). Steps: a cheap byte scan for trigger tokens (files without one are
not parsed), the file's one parse (:class:`ascendify.source.SharedParse`, which a companion such as
the analysis may share), the import checkers over every import statement, then one walk that visits
only statements on lines holding a trigger token and dispatches each node to the checkers registered
for its type, then the finishers, whose requested imports and top-level lines one inserter adds
(:mod:`ascendify.migrate._imports`). Edits are text spans of the original, applied back to front, so
everything else stays byte-identical, and the text is encoded back with the file's own encoding.
"""

from __future__ import annotations

import ast
import dataclasses
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

from ascendify.migrate._imports import Insertions
from ascendify.migrate._registry import Registry, registry_for
from ascendify.migrate._rule import Change, Context, Edit, Finding, Rule
from ascendify.migrate._settings import DEFAULT_SETTINGS, Settings
from ascendify.source import (
    ParsedSource,
    SharedParse,
    SourceText,
    UndecodableSource,
    encode,
    is_suppressed,
    walk_touching,
)
from ascendify.targets import load_facts

_IMPORTS = (ast.Import, ast.ImportFrom)


class SkipReason(str, Enum):
    NO_TRIGGER = "no CUDA idiom"  # the byte scan found nothing a rule could fire on
    TOO_LARGE = "file too large"


@dataclass(frozen=True)
class Changed:
    data: bytes  # the migrated file, in the original encoding
    encoding: str
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class Unchanged:
    changes: tuple[Change, ...]  # report-only findings (and nothing else)


@dataclass(frozen=True)
class Skipped:
    reason: SkipReason


@dataclass(frozen=True)
class Failed:
    error: str  # why the file could not be migrated (it is copied unchanged)


FileResult = Changed | Unchanged | Skipped | Failed


def migrate_source(
    data: bytes,
    settings: Settings = DEFAULT_SETTINGS,
    path: str = "",
    parse: SharedParse | None = None,
) -> FileResult:
    """Migrate one Python source file (``path``: relative to SRC). Any problem becomes :class:`Failed`.

    ``parse``: the file's shared parse when another consumer may parse it too.
    """
    if len(data) > settings.max_bytes:
        return Skipped(SkipReason.TOO_LARGE)
    registry = registry_for(settings)
    parse = parse or SharedParse(data)
    if not registry.visit_everything and not registry.trigger.found_in(parse.occurrences):
        return Skipped(SkipReason.NO_TRIGGER)
    try:
        parsed = parse.get()
    except UndecodableSource as error:
        return Failed(f"cannot decode: {error}")
    except SyntaxError as error:
        return Failed(f"does not parse: {error.msg} (line {error.lineno})")
    except (ValueError, RecursionError, MemoryError) as error:
        return Failed(f"does not parse: {type(error).__name__}: {error}")
    try:
        return _migrate_module(parsed, registry=registry, settings=settings, path=path)
    except Exception as error:  # a rule bug must not stop the run; the file is copied unchanged
        detail = traceback.format_exception_only(type(error), error)[-1].strip()
        return Failed(f"internal error: {detail}")


def _migrate_module(
    parsed: ParsedSource, *, registry: Registry, settings: Settings, path: str
) -> FileResult:
    facts = load_facts(settings.torch_npu_version)
    module, text = parsed.module, parsed.text
    settings.project.bind(parsed.names, path)  # torch through ``from utils import *``
    context = Context(
        parsed.source,
        parsed.names,
        facts,
        settings,
        path=path,
        module=module,
        rules=registry.active,
    )
    findings = list(_import_pass(context, registry))
    lines = None
    if not registry.visit_everything:
        bound = parsed.names.bound_to(
            lambda qualified: any(test(qualified) for test in registry.binding_triggers)
        )
        lines = registry.trigger.lines(parsed.occurrences, bound)
    findings.extend(_walk(context, module, registry, lines))
    applied = _without_overlaps(_unshielded(_kept(findings, context.source, registry.active)))
    insertions = context.state(Insertions)  # a finisher may look at the earlier ones' requests
    for finisher in registry.finishers:
        insertions.requested.extend(finisher(context, module, applied))
    applied.extend(_kept(insertions.findings(context, module), context.source, registry.active))
    changes = tuple(finding.change() for finding in applied)
    edits = [finding.edit for finding in applied if finding.edit is not None]
    if not edits:
        return Unchanged(changes)
    new_text = apply_edits(text, edits)
    if new_text == text:
        return Unchanged(changes)
    return Changed(encode(new_text, parsed.encoding), parsed.encoding, changes)


def _import_pass(context: Context, registry: Registry) -> Iterator[Finding]:
    """The import checkers, over every import statement in source order, before any other node:
    they may rewrite an import and record where its names now point."""
    for node in context.names.imports:
        for checker in registry.checkers.get(type(node), ()):
            yield from checker(context, node, None)


def _walk(
    context: Context, module: ast.Module, registry: Registry, lines: list[int] | None
) -> list[Finding]:
    """Visit the nodes of statements that touch a trigger line; imports were handled already."""
    checkers = registry.checkers
    found: list[Finding] = []

    def enter(node: ast.AST, parent: ast.AST | None) -> bool:
        if not isinstance(node, _IMPORTS):
            for checker in checkers.get(type(node), ()):
                found.extend(checker(context, node, parent))
        return True

    walk_touching(module, lines, enter)
    return found


def _kept(
    findings: Iterable[Finding], source: SourceText, active: frozenset[type[Rule]]
) -> list[Finding]:
    """Findings of the rules the run applies (a checker serving several rules may yield some of a
    rule it does not apply) that no suppression comment silences."""
    return [
        finding
        for finding in findings
        if finding.rule in active
        and not is_suppressed(source, {finding.start_line, finding.end_line}, finding.rule.code)
    ]


def _unshielded(findings: list[Finding]) -> list[Finding]:
    """Findings without the edits that fall on lines a ``keeps_lines`` rule keeps as written."""
    kept = [(f.start_line, f.end_line) for f in findings if f.rule.keeps_lines]
    return [
        finding
        for finding in findings
        if finding.edit is None
        or not any(start <= finding.start_line <= end for start, end in kept)
    ]


def _without_overlaps(findings: list[Finding]) -> list[Finding]:
    """Drop edits that overlap an earlier one (the first, outermost edit wins); keep reports.

    Rules of a lower ``priority`` (user rules) go first: their edits win over the built-ins'.
    """
    kept: list[Finding] = []
    reserved: list[Edit] = []  # edits of lower-priority groups, already kept
    group, last_end = None, -1
    ordered = sorted(
        findings,
        key=lambda f: (f.rule.priority, *((f.edit.start, -f.edit.end) if f.edit else (-1, 0))),
    )
    for finding in ordered:
        if finding.rule.priority != group:
            group, last_end = finding.rule.priority, -1
            reserved.extend(f.edit for f in kept if f.edit is not None)
        edit = finding.edit
        if finding.reported is not None and _within(finding.reported, reserved):
            continue  # the text it reports on is a user rule's now
        if edit is not None and _nested(kept, edit):
            kept.append(dataclasses.replace(finding, edit=None))  # its row stays, its edit is in
            continue
        if edit is not None:
            if edit.start < last_end or any(
                edit.start < other.end and other.start < max(edit.end, edit.start + 1)
                for other in reserved
            ):
                continue
            last_end = max(last_end, edit.end)
        kept.append(finding)
    kept.sort(key=lambda f: (f.start_line, f.end_line, f.rule.code))
    return kept


def _within(span: tuple[int, int], edits: list[Edit]) -> bool:
    start, end = span
    return any(edit.start <= start and end <= edit.end for edit in edits)


def _nested(kept: list[Finding], inner: Edit) -> bool:
    """Apply ``inner`` inside a kept part of an edit already kept (replacing that finding), if any."""
    for index in range(len(kept) - 1, -1, -1):
        outer = kept[index].edit
        nested = None if outer is None else outer.nest(inner)
        if nested is not None:
            kept[index] = dataclasses.replace(kept[index], edit=nested)
            return True
    return False


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits, back to front so earlier offsets stay valid.

    Insertions at one offset keep their order: the edit listed first comes first in the text.
    """
    pieces: list[str] = []
    end = len(text)
    ordered = sorted(enumerate(edits), key=lambda item: (item[1].start, item[1].end, item[0]))
    for _, edit in reversed(ordered):
        pieces.append(text[edit.end : end])
        pieces.append(edit.replacement)
        end = edit.start
    pieces.append(text[:end])
    return "".join(reversed(pieces))
