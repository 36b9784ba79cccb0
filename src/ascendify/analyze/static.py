"""``ascendify analyze -i SRC``: what in a project's sources the NPU cannot run as written.

Python files are parsed once (:mod:`ascendify.source`, the layer the migration uses too); names are resolved
through the file's imports (``th.cuda.nvtx`` after ``import torch as th`` is ``torch.cuda.nvtx``), then looked
up in the one CUDA -> NPU table (:mod:`ascendify.targets.apis`) and the analysis-only caveats. Only statements
on lines holding a trigger word are walked. C++/CUDA sources are scanned for exported operators. The input
tree is only read. :class:`StaticAnalysis` is the same analysis done on the parse of a migration
(``ascendify migrate`` writes its reports beside the result).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ascendify._fs import NotRead, TooLarge, read_source, resolved
from ascendify._parallel import parallel_map
from ascendify.analyze.caveats import (
    CAVEATS,
    DOUBLE_METHODS,
    DOUBLE_NAMES,
    DOUBLE_STRINGS,
    caveat_for,
)
from ascendify.analyze.cpp import CPP_SUFFIXES, CUDA_SUFFIXES, scan_cpp
from ascendify.analyze.findings import Finding, blocking
from ascendify.analyze.report import AnalysisResult, CustomOp, write_reports
from ascendify.configs import (
    NPU,
    TRIGGER_WORDS,
    TRIGGERS,
    call_findings,
    config_kind,
    kind_of,
    scan_config,
)
from ascendify.errors import AscendifyError
from ascendify.source import (
    NameResolver,
    ParsedSource,
    SharedParse,
    SourceText,
    Tokens,
    UndecodableSource,
    collector_paused,
    import_bindings,
    is_suppressed,
    parse_source,
    walk_touching,
)
from ascendify.targets.apis import SAME_NAME_NAMESPACES, Safety, explicit_targets, match_api
from ascendify.targets.devices import (
    ATTRIBUTE_RENAMES,
    CUDA_ONLY_LIBRARIES,
    ENV_VARS_BY_CUDA_NAME,
    METHOD_RENAMES,
    cuda_only_library,
)
from ascendify.targets.facts import TorchNpuFacts, load_facts

_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
_DEVICE_WORDS = ("cuda", "cudnn", "nccl", "gpu")


@dataclass(frozen=True)
class FileAnalysis:
    """What one file contributed (picklable: it may come back from a worker process)."""

    findings: list[Finding]
    custom_ops: list[CustomOp] = field(default_factory=list)
    skipped: dict[str, str] | None = None


@dataclass(frozen=True)
class StaticAnalysis:
    """The analysis ``migrate`` writes into its result: each Python file is analysed in the worker
    that migrates it, on the same parse (:meth:`inspect`); :meth:`write` adds the other files and
    writes the reports. Picklable: it travels to the workers."""

    version: str  # of torch_npu
    directory: str = "ascendify_analysis"  # its folder in the result

    def inspect(self, relative: str, data: bytes, parse: SharedParse) -> FileAnalysis | None:
        """One Python or configuration file of the project (None: a file this analysis does not
        look at)."""
        if not _walked(relative):
            return None
        if kind_of(relative) is not None:
            return _config_analysis(relative, data)
        return _python_analysis(relative, data, parse, load_facts(self.version))

    def write(
        self, source: Path, folder: Path, parts: Mapping[str, object], jobs: int
    ) -> tuple[str, list[Finding]]:
        """Analyse what :meth:`inspect` did not see and write ``report.json`` and the custom
        operators into ``folder``; say what, and return the findings a human may have to port
        (the migration lists those it did not handle itself in its ``unsupported_op``)."""
        prepared = {rel: part for rel, part in parts.items() if isinstance(part, FileAnalysis)}
        result = analyze_path(source, self.version, jobs=jobs, prepared=prepared)
        write_reports(result, folder, finding_tables=False)
        said = f"{len(result.findings)} analysis findings written to {self.directory}/report.json"
        return said, blocking(result.findings)


def analyze_path(
    source: Path,
    version: str | None = None,
    jobs: int = 1,
    prepared: Mapping[str, FileAnalysis] | None = None,
) -> AnalysisResult:
    """Analyse a project directory (or one file).

    With ``jobs`` > 1 the files are analysed by that many worker processes. Files are read through
    :func:`ascendify._fs.read_source`: links, FIFOs, devices and files over the size limit are
    reported as skipped, never read. ``prepared``: what is known already of some files (by path
    relative to ``source``), as a migration's workers found it.
    """
    if not source.exists():
        raise AscendifyError(f"input {source} does not exist")
    source = resolved(source)
    facts = load_facts(version)
    root = source if source.is_dir() else source.parent
    known: dict[str, FileAnalysis] = dict(prepared or {})
    files = [(path, path.relative_to(root).as_posix()) for path in _source_files(source)]
    # YAML, JSON and shell files are read here (most are data, and dropped): cheap, and a project
    # of thousands of data files does not send them to the workers one job each.
    data_files = set()
    for path, relative in files:
        if kind_of(relative) is not None and relative not in known:
            part = _config_file(path, relative)
            if part is None:
                data_files.add(relative)
            else:
                known[relative] = part
    files = [(path, relative) for path, relative in files if relative not in data_files]
    work = [(path, relative) for path, relative in files if relative not in known]
    done = parallel_map(_analyze_file, facts.version, work, jobs)
    analysed = dict(zip((item[1] for item in work), done, strict=True))
    findings: list[Finding] = []
    custom_ops: list[CustomOp] = []
    skipped: list[dict[str, str]] = []
    for _, relative in files:
        part = known[relative] if relative in known else analysed[relative]
        findings.extend(part.findings)
        custom_ops.extend(part.custom_ops)
        if part.skipped is not None:
            skipped.append(part.skipped)
    return AnalysisResult(
        mode="static",
        torch_npu_version=facts.version,
        findings=findings,
        custom_ops=custom_ops,
        details={"files": len(files), "skipped": skipped},
    )


def _analyze_file(version: str, item: tuple[Path, str]) -> FileAnalysis:
    with collector_paused():
        return _analyze_one(*item, version)


def _analyze_one(path: Path, relative: str, version: str) -> FileAnalysis:
    try:
        data = read_source(path).data
    except NotRead as reason:
        return FileAnalysis([], [], {"file": relative, "reason": f"not read: {reason}"})
    if path.suffix == ".py":
        return _python_analysis(relative, data, SharedParse(data), load_facts(version))
    ops, cpp_findings = scan_cpp(
        data.decode("utf-8", errors="replace"), relative, path.suffix in CUDA_SUFFIXES
    )
    return FileAnalysis(cpp_findings, ops)


def _python_analysis(
    relative: str, data: bytes, parse: SharedParse, facts: TorchNpuFacts
) -> FileAnalysis:
    if not _TRIGGER.found_in(parse.occurrences):
        return FileAnalysis([])  # most files of a large project: never parsed
    try:
        return FileAnalysis(_findings(parse.get(), relative, facts, pruned=True))
    except SyntaxError as error:
        reason = f"cannot be parsed: {_syntax_error(error, relative)}"
    except (UndecodableSource, ValueError) as error:
        reason = f"cannot be parsed: {error}"
    except (RecursionError, MemoryError):  # from the compiler: our own walk keeps no stack
        reason = "cannot be parsed: nested deeper than Python itself can compile"
    return FileAnalysis([], [], {"file": relative, "reason": reason})


def _config_file(path: Path, relative: str) -> FileAnalysis | None:
    """A YAML, JSON or shell file's analysis; None when it is data (no framework setting, or over
    the size limit)."""
    try:
        data = read_source(path).data
    except TooLarge:
        return None
    except NotRead as reason:
        return FileAnalysis([], [], {"file": relative, "reason": f"not read: {reason}"})
    if config_kind(relative, data) is None:
        return None
    return _config_analysis(relative, data)


def _config_analysis(relative: str, data: bytes) -> FileAnalysis:
    """A YAML, JSON or shell file: the framework settings it holds (ascendify.configs)."""
    kind = config_kind(relative, data)
    if kind is None:
        return FileAnalysis([])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return FileAnalysis([], [], {"file": relative, "reason": "not UTF-8 text"})
    source = SourceText(text)
    return FileAnalysis(
        [
            Finding(relative, found.start_line, found.end_line, found.op, found.message, found.code)
            for found in scan_config(kind, text, NPU)
            if not is_suppressed(source, {found.start_line, found.end_line}, found.code)
        ]
    )


def _syntax_error(error: SyntaxError, relative: str) -> str:
    """What ``str(error)`` says when the file is compiled under its own name."""
    name = PurePosixPath(relative).name
    return f"{error.msg} ({name}, line {error.lineno})" if error.lineno else f"{error.msg} ({name})"


def _walked(relative: str) -> bool:
    """Whether :func:`_source_files` goes into the folders of this path."""
    folders = PurePosixPath(relative).parts[:-1]
    return not any(name.startswith(".") or name in _SKIPPED_DIRS for name in folders)


def _source_files(source: Path) -> Iterator[Path]:
    if source.is_file():
        yield source
        return
    for directory, subdirs, names in os.walk(source):
        current = Path(directory)
        subdirs[:] = sorted(
            name for name in subdirs if not name.startswith(".") and name not in _SKIPPED_DIRS
        )
        for name in sorted(names):
            path = current / name
            if path.suffix == ".py" or path.suffix in CPP_SUFFIXES or kind_of(name) is not None:
                yield path


def _trigger_words() -> set[str]:
    """Words at least one of which the text of any file with a finding contains.

    A resolved name spells each of its parts somewhere in the file (in an import or an attribute
    chain), so one part stands for each table key: one naming a device (rarest), else the longest.
    """
    keys = [
        *(target.cuda for target in explicit_targets()),
        *SAME_NAME_NAMESPACES,
        *CAVEATS,
        *DOUBLE_NAMES,
        *(library.module for library in CUDA_ONLY_LIBRARIES),
    ]
    words = {_rarest_part(key) for key in keys}
    words.update(DOUBLE_STRINGS, DOUBLE_METHODS, ATTRIBUTE_RENAMES, METHOD_RENAMES)
    words.update(ENV_VARS_BY_CUDA_NAME)
    words.update(TRIGGER_WORDS)  # framework settings in calls (ascendify.configs)
    return words


def _rarest_part(key: str) -> str:
    parts = [part for part in key.split(".") if part != "torch"]
    device_named = [part for part in parts if any(word in part.lower() for word in _DEVICE_WORDS)]
    return min(device_named, key=len) if device_named else max(parts, key=len)


# Most files of a large project mention none of these: they are not parsed at all. As whole words:
# a name resolves to a table key only if the file spells each part of the key as an identifier, and
# a string is reported only if its value equals a listed one (a file saying "compiled" or
# "recompile", never "compile" alone, is not parsed for torch.compile).
_TRIGGER = Tokens.of(
    (token.encode() for token in TRIGGERS),  # framework settings in calls, inside names
    (word.encode() for word in _trigger_words()),
)


def analyze_python(data: bytes, file: str, facts: TorchNpuFacts) -> list[Finding]:
    """The findings of one file as the analysis gets them: files without a trigger word are not
    parsed, statements on no line with one are not walked (raises if the file does not parse)."""
    parse = SharedParse(data)
    if not _TRIGGER.found_in(parse.occurrences):
        return []
    return _findings(parse.get(), file, facts, pruned=True)


def findings_in_python(data: bytes, file: str, facts: TorchNpuFacts) -> list[Finding]:
    """Every finding of one file, parsed and resolved, every node walked (no shortcut)."""
    return _findings(parse_source(data), file, facts, pruned=False)


def _findings(parsed: ParsedSource, file: str, facts: TorchNpuFacts, pruned: bool) -> list[Finding]:
    lines = None
    if pruned:
        lines = _TRIGGER.lines(parsed.occurrences, parsed.names.bound_to(_TRIGGER.in_name))
    visitor = _PythonVisitor(file, parsed.names, facts, parsed.source)
    walk_touching(parsed.module, lines, visitor.enter)
    found = dict.fromkeys(visitor.findings)  # one row per line, code and name
    return [
        finding
        for finding in found
        if not is_suppressed(parsed.source, {finding.start_line, finding.end_line}, finding.code)
    ]


class _PythonVisitor:
    """``visit_<Node>`` methods return whether to look inside the node; nodes without one are entered."""

    def __init__(
        self, file: str, names: NameResolver, facts: TorchNpuFacts, source: SourceText
    ) -> None:
        self.file = file
        self.names = names
        self.facts = facts
        self.source = source
        self.findings: list[Finding] = []

    def enter(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """For :func:`ascendify.source.walk_touching`: visit ``node``, say whether to look inside."""
        if type(parent) is ast.Attribute:
            return self._rest_of_chain(node)
        visit = _VISITS.get(type(node))
        return visit is None or visit(self, node)

    def _rest_of_chain(self, node: ast.AST) -> bool:
        """The value of an attribute chain that did not resolve (``a.b`` in ``a.b.c``): it has the
        same root, so it does not resolve either, and is not looked up again."""
        if type(node) is ast.Attribute:
            self._renamed_attribute(node)
            return True
        if type(node) is ast.Name:
            return False
        visit = _VISITS.get(type(node))
        return visit is None or visit(self, node)

    def _add(self, node: ast.AST, op: str, tips: str, code: str) -> None:
        line = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or line
        self.findings.append(Finding(self.file, line, end, op, tips, code))

    def visit_Import(self, node: ast.Import) -> bool:
        for alias in node.names:
            self._library(node, alias.name)
        return False

    def visit_ImportFrom(self, node: ast.ImportFrom) -> bool:
        if node.module and node.level == 0:
            self._library(node, node.module)
            for _, qualified, _ in import_bindings(node):
                self._library(node, qualified)
        return False

    def _library(self, node: ast.AST, module: str) -> None:
        library = cuda_only_library(module)
        if library is not None:
            self._add(node, library.module, library.advice, "AN103")

    def visit_Attribute(self, node: ast.Attribute) -> bool:
        if self._qualified(node):
            return False
        self._renamed_attribute(node)
        return True

    def _renamed_attribute(self, node: ast.Attribute) -> None:
        renamed = ATTRIBUTE_RENAMES.get(node.attr)
        if renamed is not None:
            tips = f"NPU: .{renamed} (ascendify migrate rewrites it)"
            self._add(node, f".{node.attr}", tips, "AN100")

    def visit_Name(self, node: ast.Name) -> bool:
        self._qualified(node)
        return False

    def _qualified(self, node: ast.expr) -> bool:
        """Report the imported name a chain stands for; True when the chain was resolved."""
        qualified = self.names.qualified_name(node)
        if qualified is None:
            return False
        self._classify(node, qualified)
        return True

    def _classify(self, node: ast.expr, qualified: str) -> None:
        if qualified in DOUBLE_NAMES:
            self._add(node, qualified, _DOUBLE_TIPS, "AN104")
            return
        match = match_api(qualified, self.facts)
        if match is not None:
            note = match.target.note
            if match.npu_name is None:
                self._add(node, qualified, note, "AN101")
            elif match.target.safety is Safety.UNSAFE or note:
                self._add(node, qualified, f"NPU: {match.npu_name}; {note}", "AN102")
            elif any(word in qualified.lower() for word in _DEVICE_WORDS):
                tips = f"NPU: {match.npu_name} (ascendify migrate rewrites it)"
                self._add(node, qualified, tips, "AN100")
            return
        caveat = caveat_for(qualified)
        if caveat is not None:
            self._add(node, qualified, caveat.tips, caveat.code)

    def visit_Call(self, node: ast.Call) -> bool:
        if isinstance(node.func, ast.Attribute):
            self._method_call(node, node.func)
        for keyword in node.keywords:
            value = keyword.value
            if (
                keyword.arg == "dtype"
                and isinstance(value, ast.Constant)
                and value.value in DOUBLE_STRINGS
            ):
                self._add(value, f"dtype={value.value!r}", _DOUBLE_TIPS, "AN104")
        for found in call_findings(node, self.names, self.source, NPU):
            self.findings.append(
                Finding(
                    self.file, found.start_line, found.end_line, found.op, found.message, found.code
                )
            )
        return True

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        if func.attr in DOUBLE_METHODS and not node.args:
            self._add(node, f".{func.attr}()", _DOUBLE_TIPS, "AN104")
        renamed = METHOD_RENAMES.get(func.attr)
        if renamed is not None and self.names.qualified_name(func) is None:
            tips = f"NPU: .{renamed}() (ascendify migrate rewrites it)"
            self._add(node, f".{func.attr}()", tips, "AN100")

    def visit_Constant(self, node: ast.Constant) -> bool:
        target = ENV_VARS_BY_CUDA_NAME.get(node.value) if isinstance(node.value, str) else None
        if target is not None:
            tips = f"set {target.npu} instead" if target.npu else target.note
            self._add(node, target.cuda, f"no effect on the NPU; {tips}", "AN106")
        return False


# The visit method of each node type that has one, looked up by type (not by name) for every node.
_VISITS: dict[type[ast.AST], Callable[[_PythonVisitor, Any], bool]] = {
    getattr(ast, name.removeprefix("visit_")): method
    for name, method in vars(_PythonVisitor).items()
    if name.startswith("visit_")
}

_DOUBLE_TIPS = (
    "float64: most NPU kernels have no double support (DT_DOUBLE errors); use float32 "
    "unless the precision is needed"
)
