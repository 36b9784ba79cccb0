"""The rule protocol: what a rule is, what it yields, and how rules are found.

A rule is a subclass of :class:`Rule` that carries its code, safety class and documentation (the class
docstring, with the sections *What it does*, *Why*, *Example* and *Fix safety*). Subclassing registers
it. A rule belongs to one :class:`Mode` (the default run, or a mode such as ``--target portable``): a
mode's rules subclass its base class (``class PortableRule(Rule): mode = PORTABLE``). The code that
finds a rule is a *checker*: a function registered with :func:`checks` for the ast node types it looks
at and the rules it serves, which yields :class:`Finding` objects naming their rule. Checkers never edit
text and never write files; the engine applies their edits.

Subclassing and the decorators record what they register in :data:`REGISTERED`; the registry
(:mod:`ascendify.migrate._registry`, which stands above this module) imports every rule module and
decides which rules a run applies. The protocol imports no rule, no registry and no engine.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

from ascendify.migrate._modes import Modes, Target
from ascendify.migrate._settings import Settings
from ascendify.source import NameResolver, NodeIndex, SourceText
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
    """Replace ``text[start:end]`` of the decoded original source (string offsets).

    ``kept`` names the parts of the original the replacement holds verbatim, as ``(start, end, at)``:
    ``text[start:end]`` is ``replacement[at:at + end - start]``. An edit of another rule inside such
    a part is applied there (a wrapped call's arguments are migrated in the same pass).
    """

    start: int
    end: int
    replacement: str
    kept: tuple[tuple[int, int, int], ...] = ()

    def nest(self, inner: Edit) -> Edit | None:
        """This edit with ``inner`` applied inside one of its kept parts; None if it is not inside one."""
        for index, (start, end, at) in enumerate(self.kept):
            if start <= inner.start and inner.end <= end and start < inner.end:
                cut = at + inner.start - start
                replacement = (
                    self.replacement[:cut]
                    + inner.replacement
                    + self.replacement[cut + inner.end - inner.start :]
                )
                shift = len(inner.replacement) - (inner.end - inner.start)
                kept = (
                    *self.kept[:index],
                    (start, inner.start, at),
                    *((s, e, cut + a) for s, e, a in inner.kept),
                    (inner.end, end, cut + len(inner.replacement)),
                    *((s, e, a + shift) for s, e, a in self.kept[index + 1 :]),
                )
                return Edit(self.start, self.end, replacement, kept)
        return None


@dataclass(frozen=True)
class Change:
    """One row of the change list: picklable, line numbers of the original file."""

    code: str
    safety: Safety
    operation: Operation
    start_line: int
    end_line: int
    message: str


@dataclass(frozen=True)
class Switch:
    """The command-line flag of an on/off mode: ``ascendify migrate`` adds one per such mode."""

    flags: tuple[str, ...]  # ("-s", "--specify-device")
    help: str


# Writes what a mode adds into the result directory, once the files are migrated; returns the names
# written (for the log). The run it is given is a ``_tree.TreeResult``: the tree runner stands above
# this protocol, so the protocol cannot name its type.
ExtrasWriter = Callable[[Modes, Any, Path], list[str]]


@dataclass(frozen=True)
class Extras:
    """What a mode puts beside the migrated code (:mod:`ascendify.migrate.extras` asks the modes that
    are on)."""

    # Names at the top of the result the writer may use: an entry of SRC named so is not mirrored.
    reserves: frozenset[str] = frozenset()
    write: ExtrasWriter | None = None
    # Refuses (AscendifyError) a SRC whose own files the writer would overwrite, before anything runs.
    check: Callable[[Path], None] | None = None


@dataclass(frozen=True)
class Mode:
    """A kind of run that switches on rules of its own (its rules set ``mode`` to it)."""

    name: str  # as the docs and the change list's readers know it: "portable"; "" the default run
    rank: int  # its place in the mode rule reference (docs/migrate-modes.md) and among the options
    # Its rules look at code without CUDA idioms (data loaders, file APIs, user names, every file
    # importing torch), so files are parsed and walked whole, not only where a trigger token is.
    visits_everything: bool = False
    # An on/off mode has a switch: it is on when Modes.switches names it.
    switch: Switch | None = None
    # Any other mode (a target, a sub-command, a file) says from its own Modes field when it is on.
    when: Callable[[Modes], bool] | None = None
    extras: Extras = Extras()

    def __post_init__(self) -> None:
        if (self.switch is None) == (self.when is None):
            raise TypeError(f"mode {self.name!r} needs exactly one of switch and when")

    def on(self, modes: Modes) -> bool:
        """Whether a run with these modes applies the mode's rules."""
        return modes.has(self) if self.when is None else self.when(modes)


DEFAULT_RUN = Mode("", 0, when=lambda modes: True)


class Rule:
    """Base of every rule. Subclasses set the class attributes and document themselves.

    A class without a ``code`` of its own (a mode's base class) is not a rule and is not registered.
    """

    code: ClassVar[str]  # stable, never reused: "NPU201"
    name: ClassVar[str]  # kebab-case, for humans: "cuda-method"
    summary: ClassVar[str]  # one line for tables and docs
    safety: ClassVar[Safety]
    operation: ClassVar[Operation] = Operation.MODIFY  # of an edit; report-only rules set theirs
    # Byte strings, one of which occurs in every file this rule can fire on (the cheap pre-scan),
    # anywhere, or for ``trigger_words`` as a whole word (no letter, digit or _ beside it) where
    # code may use it (see ascendify.source.Tokens).
    triggers: ClassVar[tuple[bytes, ...]] = ()
    trigger_words: ClassVar[tuple[bytes, ...]] = ()
    targets: ClassVar[frozenset[Target]] = frozenset({Target.NPU})  # targets whose runs apply it
    priority: ClassVar[int] = 0  # lower wins overlapping edits (user rules: -1)
    mode: ClassVar[Mode] = DEFAULT_RUN
    keeps_lines: ClassVar[bool] = False  # its findings' lines are left as they are (no edits)
    opt_in: ClassVar[bool] = False  # runs only when the user enables its code (--enable)

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "code" not in cls.__dict__:
            return
        if cls.code in REGISTERED.rules:
            raise TypeError(f"rule code {cls.code} is used twice")
        REGISTERED.rules[cls.code] = cls

    @classmethod
    def applies(cls, settings: Settings) -> bool:
        """Whether a run with these settings applies the rule."""
        return (
            cls.mode.on(settings.modes)
            and settings.modes.target in cls.targets
            and (settings.select is None or cls.code in settings.select)
            and (not cls.opt_in or cls.code in settings.enabled)
        )

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
    # A report's text (string offsets): a report on text an earlier rule group (the user's rules)
    # rewrote is dropped with the text it spoke of. None: the report stands whatever is edited.
    reported: tuple[int, int] | None = None

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
    rules: frozenset[type[Rule]] = frozenset()  # the rules this run applies
    _states: dict[type, object] = field(default_factory=dict, repr=False)

    @property
    def modes(self) -> Modes:
        return self.settings.modes

    @cached_property
    def nodes(self) -> NodeIndex:
        """Every node of the file, indexed by one walk on the first question: a rule that asks
        about the whole file reads this, never a walk of its own."""
        return NodeIndex(self.module)

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

    def wrap(self, node: ast.AST, before: str, after: str) -> Edit:
        """``before`` + the node's text + ``after``; edits inside the node still apply."""
        return self.compose(*self.span(node), (before, node, after))

    def compose(self, start: int, end: int, pieces: Iterable[str | ast.AST]) -> Edit:
        """Replace ``text[start:end]`` with the pieces: text, or nodes kept as written (other
        rules' edits inside them still apply)."""
        parts: list[str] = []
        kept: list[tuple[int, int, int]] = []
        at = 0
        for piece in pieces:
            text = piece
            if isinstance(piece, ast.AST):
                node_start, node_end = self.span(piece)
                kept.append((node_start, node_end, at))
                text = self.source.text[node_start:node_end]
            assert isinstance(text, str)
            parts.append(text)
            at += len(text)
        return Edit(start, end, "".join(parts), tuple(kept))


Checker = Callable[[Context, ast.AST, ast.AST | None], Iterable[Finding]]
# Runs once after the walk with every finding: what the file needs at its top (imports, and code that
# must follow them), as ``_imports.Insertion`` requests that module inserts (it stands above this
# protocol, which cannot name the type).
Finisher = Callable[[Context, ast.Module, list[Finding]], Iterable[Any]]
# The rules a checker or finisher serves; a function when they are known only once every rule module
# is imported (the API families, the slot kinds).
Serves = Collection[type[Rule]] | Callable[[], Iterable[type[Rule]]]


@dataclass
class Registrations:
    """What the rule modules registered as they were imported: a :class:`Rule` subclass with a
    code, and the functions of :func:`checks`, :func:`finishes` and :func:`binding_trigger`."""

    rules: dict[str, type[Rule]] = field(default_factory=dict)
    checkers: dict[type[ast.AST], list[Checker]] = field(default_factory=dict)
    finishers: list[Finisher] = field(default_factory=list)
    serves: dict[Callable[..., object], Serves] = field(default_factory=dict)
    binding_triggers: list[Callable[[str], bool]] = field(default_factory=list)


REGISTERED = Registrations()


def checks(*node_types: type[ast.AST], rules: Serves) -> Callable[[Checker], Checker]:
    """Register a checker for the given node types and the rules whose findings it yields.

    ``ast.Import``/``ast.ImportFrom`` checkers run in a first pass, before any other node is visited,
    so they may rewrite an import and record where its names now point (in their :meth:`Context.state`).
    """

    def register(checker: Checker) -> Checker:
        for node_type in node_types:
            REGISTERED.checkers.setdefault(node_type, []).append(checker)
        REGISTERED.serves[checker] = rules
        return checker

    return register


def finishes(*, rules: Serves) -> Callable[[Finisher], Finisher]:
    """Register a finisher (it runs once per file, after the walk) for the rules it requests
    insertions of."""

    def register(finisher: Finisher) -> Finisher:
        REGISTERED.finishers.append(finisher)
        REGISTERED.serves[finisher] = rules
        return finisher

    return register


def binding_trigger(predicate: Callable[[str], bool]) -> Callable[[str], bool]:
    """Register a test on qualified names: local names bound to such a name are trigger tokens.

    After ``from torch.cuda.amp import autocast`` a line that says only ``autocast(...)`` must still be
    visited; the engine adds ``autocast`` to the tokens it looks for on that file's lines.
    """
    REGISTERED.binding_triggers.append(predicate)
    return predicate
