"""The rule protocol: what a rule is, what it yields, and how rules are found.

A rule is a subclass of :class:`Rule` that carries its code, safety class and documentation (the class
docstring, with the sections *What it does*, *Why*, *Example* and *Fix safety*). Subclassing registers
it. The code that finds it is a *checker*: a function registered with :func:`checks` for the ast node
types it looks at, which yields :class:`Finding` objects naming their rule. Checkers never edit text
and never write files; the engine applies their edits.

Rule modules live in :mod:`ascendify.migrate.rules` (one per family) and are imported by
:func:`load_rules`, never listed by hand.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import ClassVar, TypeVar, cast

from ascendify.errors import AscendifyError
from ascendify.migrate._modes import Modes, Target
from ascendify.migrate._settings import Settings
from ascendify.source import NameResolver, SourceText, Tokens
from ascendify.targets import Safety, TorchNpuFacts


class Operation(str, Enum):
    """The "Operation Type" column of change_list.csv."""

    INSERT = "INSERT"
    MODIFY = "MODIFY"
    DELETE = "DELETE"
    UNSUPPORTED = "UNSUPPORTED"  # left in place: no NPU counterpart
    ADVICE = "ADVICE"  # left in place: works, but behaves differently on NPU


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` of the decoded original source (string offsets)."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Change:
    """One row of the change list: picklable, line numbers of the original file."""

    code: str
    safety: Safety
    operation: Operation
    start_line: int
    end_line: int
    message: str


class Rule:
    """Base of every rule. Subclasses set the class attributes and document themselves."""

    code: ClassVar[str]  # stable, never reused: "NPU201"
    name: ClassVar[str]  # kebab-case, for humans: "cuda-method"
    summary: ClassVar[str]  # one line for tables and docs
    safety: ClassVar[Safety]
    operation: ClassVar[Operation] = Operation.MODIFY  # of an edit; report-only rules set theirs
    # Byte strings, one of which occurs in every file this rule can fire on (the cheap pre-scan).
    triggers: ClassVar[tuple[bytes, ...]] = ()
    targets: ClassVar[frozenset[Target]] = frozenset({Target.NPU})  # targets whose runs apply it
    priority: ClassVar[int] = 0  # lower wins overlapping edits (user rules: -1)
    mode: ClassVar[str] = ""  # the option enabling it ("portable", "distributed", ...) or ""
    keeps_lines: ClassVar[bool] = False  # its findings' lines are left as they are (no edits)
    opt_in: ClassVar[bool] = False  # runs only when the user enables its code (--enable)

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if cls.code in _RULES:
            raise TypeError(f"rule code {cls.code} is used twice")
        _RULES[cls.code] = cls

    @classmethod
    def finding(cls, node: ast.AST, message: str, edit: Edit | None = None) -> Finding:
        if (edit is None) != (cls.safety is Safety.REPORT_ONLY):
            raise ValueError(
                f"{cls.code}: a {cls.safety.value} rule must {'' if edit is None else 'not '}edit"
            )
        start = getattr(node, "lineno", 1)
        return Finding(cls, start, getattr(node, "end_lineno", None) or start, message, edit)


@dataclass(frozen=True)
class Finding:
    rule: type[Rule]
    start_line: int
    end_line: int
    message: str
    edit: Edit | None = None

    def change(self) -> Change:
        operation = self.rule.operation
        if self.edit is not None and operation is Operation.MODIFY:
            if self.edit.start == self.edit.end:
                operation = Operation.INSERT
            elif not self.edit.replacement:
                operation = Operation.DELETE
        return Change(
            self.rule.code,
            self.rule.safety,
            operation,
            self.start_line,
            self.end_line,
            self.message,
        )


_State = TypeVar("_State")


@dataclass
class Context:
    """What a checker may look at for the file being migrated."""

    source: SourceText
    names: NameResolver
    facts: TorchNpuFacts
    settings: Settings
    path: str = ""  # of the file, relative to SRC ("" when migrating a lone source)
    module: ast.Module = field(default_factory=lambda: ast.Module(body=[], type_ignores=[]))
    cache: dict[tuple[str, int], object] = field(default_factory=dict)  # per-file scratch
    _states: dict[type, object] = field(default_factory=dict, repr=False)

    @property
    def modes(self) -> Modes:
        return self.settings.modes

    def state(self, kind: type[_State]) -> _State:
        """This file's instance of ``kind``, made on first use: what a rule family works out once
        per file (a class with a no-argument constructor, typically a dataclass), typed."""
        found = self._states.get(kind)
        if found is None:
            found = self._states[kind] = kind()
        return cast(_State, found)

    def span(self, node: ast.AST) -> tuple[int, int]:
        """String offsets of a node (expression or statement) in the decoded source."""
        start = self.source.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.source.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.source.text[start:end]

    def replace(self, node: ast.AST, replacement: str) -> Edit:
        start, end = self.span(node)
        return Edit(start, end, replacement)


Checker = Callable[[Context, ast.AST, ast.AST | None], Iterable[Finding]]
# Runs once after the walk with every finding so far (e.g. to add one import for the whole file).
Finisher = Callable[[Context, ast.Module, list[Finding]], Iterable[Finding]]

_RULES: dict[str, type[Rule]] = {}
_CHECKERS: dict[type[ast.AST], list[Checker]] = {}
_FINISHERS: list[Finisher] = []
_BINDING_TRIGGERS: list[Callable[[str], bool]] = []


def checks(*node_types: type[ast.AST]) -> Callable[[Checker], Checker]:
    """Register a checker for the given node types.

    ``ast.Import``/``ast.ImportFrom`` checkers run in a first pass, before any other node is visited,
    so they may rewrite an import and record where its names now point (in their :meth:`Context.state`).
    """

    def register(checker: Checker) -> Checker:
        for node_type in node_types:
            _CHECKERS.setdefault(node_type, []).append(checker)
        return checker

    return register


def finishes(finisher: Finisher) -> Finisher:
    _FINISHERS.append(finisher)
    return finisher


_CONDITIONS: dict[Callable[..., object], Callable[[Modes], bool]] = {}
_F = TypeVar("_F", bound=Callable[..., object])


def only_when(condition: Callable[[Modes], bool]) -> Callable[[_F], _F]:
    """Run a checker or finisher only in runs whose modes satisfy ``condition`` (above @checks)."""

    def register(function: _F) -> _F:
        _CONDITIONS[function] = condition
        return function

    return register


def binding_trigger(predicate: Callable[[str], bool]) -> Callable[[str], bool]:
    """Register a test on qualified names: local names bound to such a name are trigger tokens.

    After ``from torch.cuda.amp import autocast`` a line that says only ``autocast(...)`` must still be
    visited; the engine adds ``autocast`` to the tokens it looks for on that file's lines.
    """
    _BINDING_TRIGGERS.append(predicate)
    return predicate


@dataclass(frozen=True)
class Registry:
    rules: dict[str, type[Rule]]
    checkers: dict[type[ast.AST], list[Checker]]
    finishers: tuple[Finisher, ...]
    binding_triggers: tuple[Callable[[str], bool], ...]
    trigger: Tokens
    conditions: dict[Callable[..., object], Callable[[Modes], bool]] = field(default_factory=dict)

    def for_modes(self, modes: Modes) -> Registry:
        """The registry without the checkers and finishers that these modes switch off."""
        if not self.conditions:
            return self

        def on(function: Callable[..., object]) -> bool:
            condition = self.conditions.get(function)
            return condition is None or condition(modes)

        # Built per file (a few microseconds), so the registry stays the one source of truth.
        return dataclasses.replace(
            self,
            checkers={kind: [c for c in found if on(c)] for kind, found in self.checkers.items()},
            finishers=tuple(f for f in self.finishers if on(f)),
            conditions={},
        )


@cache
def load_rules() -> Registry:
    """Import every rule module once and return what they registered."""
    from ascendify.migrate import modes, rules

    for package in (rules, modes):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return Registry(
        rules=dict(sorted(_RULES.items())),
        checkers={node_type: list(found) for node_type, found in _CHECKERS.items()},
        finishers=tuple(_FINISHERS),
        binding_triggers=tuple(_BINDING_TRIGGERS),
        trigger=Tokens.of(token for rule in _RULES.values() for token in rule.triggers),
        conditions=dict(_CONDITIONS),
    )


def iter_rules(mode: str | None = "") -> Iterator[type[Rule]]:
    """Rules of the default run, of one mode (``"portable"``, ...), or of every mode (None)."""
    for rule in load_rules().rules.values():
        if mode is None or rule.mode == mode:
            yield rule


def opt_in_codes(codes: Iterable[str]) -> frozenset[str]:
    """The codes a user enables (``--enable``), checked to name opt-in rules."""
    opt_in = sorted(rule.code for rule in load_rules().rules.values() if rule.opt_in)
    for code in codes:
        if code not in opt_in:
            raise AscendifyError(
                f"--enable {code}: not an opt-in rule (opt-in rules: {', '.join(opt_in)})"
            )
    return frozenset(codes)
