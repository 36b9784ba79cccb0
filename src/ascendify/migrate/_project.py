"""Names a file gets from the project's own modules: ``from utils import *`` where ``utils.py`` does
``import torch`` binds ``torch`` in the importing file, and so does ``from pkg import torch``.

Worked out once per run, before the files are migrated (:func:`project_names`), from the top-level
imports of every Python file of SRC; each file's migration then binds the names its own imports of
project modules bring (:meth:`ProjectNames.bind`). Only torch names are carried: they are what the
rules look for. The pass also reads which parameters of each module's top-level functions reach a
device (:mod:`ascendify.migrate._project_functions`): a file that calls ``move(batch, "cuda")``
from another module then passes a device (:meth:`ProjectNames.device_callables`).
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from ascendify._fs import NotRead, read_source
from ascendify._parallel import parallel_map
from ascendify.migrate._project_cuda import cuda_only_functions
from ascendify.migrate._project_functions import DeviceFunction, device_functions
from ascendify.source import NameResolver, UndecodableSource, decode, import_bindings

# A top-level import statement: one line, or a parenthesised list of names over several lines.
# Each pattern here finds what starts a line by the line break before it, searched in the text with
# one put first: a pattern starting with a literal is searched for as fast as bytes.find, where
# re.MULTILINE's "^" is tried at every byte (0.5 s over torch's tree, 0.07 s so).
_TOP_LEVEL_IMPORT = re.compile(
    rb"\n(from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t]+[^\n]*)"
)
_DEFINES_ALL = re.compile(rb"\n__all__\b")
_ASSIGNS_ALL = re.compile(r"\n__all__\b")
# ``__all__ = [...]`` or ``(...)`` of plain string literals (comments and line breaks between them),
# ended by the end of its line: most modules spell it so.
_LITERAL_LIST = re.compile(
    r"""__all__[ \t]*=[ \t]*(?:\[(?:\s|#[^\n]*|'[^'\\\n]*'|"[^"\\\n]*"|,)*\]"""
    r"""|\((?:\s|#[^\n]*|'[^'\\\n]*'|"[^"\\\n]*"|,)*\))[ \t]*(?:#[^\n]*)?(?=\r?\n|$)"""
)
_CARRIED_ROOT = "torch"


@dataclass(frozen=True)
class _Module:
    """What one project module binds at its top level, as found in its source."""

    bindings: tuple[tuple[str, str], ...]  # (local, qualified) of its torch imports
    stars: tuple[str, ...]  # modules it star-imports, resolved to project module names
    public: frozenset[str] | None  # its __all__ when it has one (None: every public name)
    # The functions it takes from project modules, when it holds a CUDA literal: (module, name).
    # Their device parameters are read after.
    wants: tuple[tuple[str, str], ...] = ()
    # The project modules it imports, when it checks that CUDA is available and the run follows
    # such checks into them (the portable target).
    checked: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class ProjectNames:
    """The torch names each project module exports (hashable: part of the run's settings)."""

    # (module, local, qualified, whether a star import brings it: public and in any __all__)
    exports: frozenset[tuple[str, str, str, bool]] = frozenset()
    # (module, function) of the top-level functions whose parameters reach a device.
    functions: frozenset[tuple[str, DeviceFunction]] = frozenset()
    # (module, path relative to SRC) of the modules a file checking CUDA's availability imports,
    # where a run follows such checks into them (the portable target), and what is left on CUDA
    # there: a file's migration reads one only when a check it widens calls into it.
    checked: frozenset[tuple[str, str]] = frozenset()
    source: str = ""  # SRC, to read them from
    is_cuda_only: Callable[[str], bool] | None = None

    # Compared by a digest of the exports: the settings are looked up (registry_for, _index) once
    # per file, and a copy that crossed to a worker compared element by element cost milliseconds
    # per file with torch's 13,000 exports.
    @cached_property
    def _digest(self) -> str:
        listed = "\n".join(
            [
                *("\t".join(map(str, export)) for export in sorted(self.exports)),
                *(f"{module}\t{function}" for module, function in sorted(self.functions, key=str)),
                *(f"{module}\t{rel}" for module, rel in sorted(self.checked)),
                f"{self.source}\t{getattr(self.is_cuda_only, '__qualname__', None)}",
            ]
        )
        # A module named from an undecodable file name holds surrogates.
        data = listed.encode("utf-8", "surrogatepass")
        return hashlib.blake2b(data, digest_size=16).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProjectNames):
            return NotImplemented
        return self is other or self._digest == other._digest

    def __hash__(self) -> int:
        return hash(self._digest)

    def bind(self, names: NameResolver, path: str) -> None:
        """Bind in ``names`` what the file at ``path`` (relative to SRC) imports from the project."""
        if not self.exports:
            return
        index = _index(self)
        for node in names.imports:
            if not isinstance(node, ast.ImportFrom):
                continue
            module = resolve_module(node, path, index)
            if module is None:
                continue
            exported = index[module]
            for alias in node.names:
                if alias.name == "*":
                    pairs = [(local, q) for local, (q, starred) in exported.items() if starred]
                elif alias.name in exported:
                    pairs = [(alias.asname or alias.name, exported[alias.name][0])]
                else:
                    continue
                for local, qualified in pairs:
                    # The file's own binding of an imported name is the project module's path
                    # ("utils.torch"): what that name is bound to there replaces it.
                    bound = names.bindings.get(local)
                    if bound is None or bound.qualified == f"{node.module}.{alias.name}":
                        names.bind(local, qualified)

    def device_callables(self, names: NameResolver, path: str) -> dict[str, DeviceFunction]:
        """The project's functions with device parameters that the file at ``path`` imports, by
        the dotted name its calls use (``move``, ``utils.move``, ``u.move``)."""
        by_module: dict[str, dict[str, DeviceFunction]] = {}
        for module, function in self.functions:
            by_module.setdefault(module, {})[function.name] = function
        found: dict[str, DeviceFunction] = {}
        for node in names.imports:
            for local, whole in _imported_project_modules(node, path, by_module):
                for name, function in by_module[whole].items():
                    found[f"{local}.{name}"] = function
            if not isinstance(node, ast.ImportFrom):
                continue
            offered = by_module.get(resolve_module(node, path, by_module) or "", {})
            for alias in node.names:
                imported = offered.get(alias.name)
                if imported is not None:
                    found[alias.asname or alias.name] = imported
        return found

    def cuda_only_imports(
        self, names: NameResolver, path: str, max_bytes: int
    ) -> dict[str, CudaOnlyImport]:
        """What the file at ``path`` imports from the modules a check may call into, by the local
        name (``rng``, ``TRACKER``): the module, and the name taken from it (None: the module
        itself)."""
        if self.is_cuda_only is None or not self.checked:
            return {}
        by_module = _checked_modules(self, max_bytes)
        found: dict[str, CudaOnlyImport] = {}
        for node in names.imports:
            for bound, whole in _imported_project_modules(node, path, by_module):
                found[bound] = CudaOnlyImport(whole, None, by_module[whole])
            if isinstance(node, ast.ImportFrom):
                origin = resolve_module(node, path, by_module)
                if origin is None:
                    continue
                for alias in node.names:
                    # ``from pkg import rng`` binds the module rng where there is one.
                    taken = CudaOnlyImport(origin, alias.name, by_module[origin])
                    found.setdefault(alias.asname or alias.name, taken)
        return found


@dataclass(frozen=True)
class _ModuleText:
    """A project module whose functions reaching a CUDA-only call are read on first question."""

    path: Path
    max_bytes: int
    is_cuda_only: Callable[[str], bool]

    def functions(self) -> dict[str, str]:
        return _cuda_only_functions(self)


@cache
def _checked_modules(project: ProjectNames, max_bytes: int) -> dict[str, _ModuleText]:
    """The modules a check may call into, by name (made once per process)."""
    assert project.is_cuda_only is not None
    return {
        module: _ModuleText(Path(project.source, rel), max_bytes, project.is_cuda_only)
        for module, rel in project.checked
    }


@cache
def _cuda_only_functions(module: _ModuleText) -> dict[str, str]:
    """The module's functions and methods reaching a CUDA-only call -> that call's name: read once
    per process (the files migrated after ask again)."""
    try:
        data = read_source(module.path, module.max_bytes).data
    except NotRead:
        return {}
    return dict(cuda_only_functions(data, module.is_cuda_only))


@dataclass(frozen=True)
class CudaOnlyImport:
    """A name a file imports from a project module some of whose functions reach a CUDA-only call."""

    module: str
    name: str | None  # the name taken from the module (None: the module itself)
    text: _ModuleText

    def reached(self, called: list[str]) -> str | None:
        """What a call of ``called`` (the dotted parts after the imported name) reaches:
        ``helper()`` where ``helper`` is such a function, ``TRACKER.save()`` and ``rng.seed()``
        where a function or method of the module so named is one."""
        last = called[-1] if called else self.name
        if last is None:
            return None
        reached = self.text.functions().get(last)
        return None if reached is None else f"{self.module}.{last} ({reached})"


def _imported_project_modules(
    node: ast.Import | ast.ImportFrom, path: str, known: Collection[str]
) -> Iterator[tuple[str, str]]:
    """``(local dotted name, module)`` for each project module of ``known`` an import binds as a
    module: ``import utils``, ``import pkg.utils as u``, ``from pkg import utils``."""
    if isinstance(node, ast.Import):
        package = path.split("/")[:-1]
        for alias in node.names:
            for module in (".".join([*package, alias.name]), alias.name):
                if module in known:
                    yield alias.asname or alias.name, module
                    break
        return
    parent = resolve_package(node, path)
    for alias in node.names:
        for module in (f"{base}.{alias.name}".lstrip(".") for base in parent):
            if module in known:
                yield alias.asname or alias.name, module
                break


@cache
def _index(project: ProjectNames) -> dict[str, dict[str, tuple[str, bool]]]:
    index: dict[str, dict[str, tuple[str, bool]]] = {}
    for module, local, qualified, starred in sorted(project.exports):
        index.setdefault(module, {})[local] = (qualified, starred)
    return index


def module_name(rel: str) -> str:
    """``pkg.utils`` for ``pkg/utils.py``, ``pkg`` for ``pkg/__init__.py``."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def resolve_module(node: ast.ImportFrom, path: str, known: Iterable[str]) -> str | None:
    """The project module ``from X import ...`` in the file at ``path`` names: relative to the
    file's package (a ``from .x`` import, or a script beside its modules), else to SRC's root."""
    names = known if isinstance(known, dict | set | frozenset) else set(known)
    return next((name for name in resolve_package(node, path) if name and name in names), None)


def resolve_package(node: ast.ImportFrom, path: str) -> list[str]:
    """The module names ``from X import ...`` in the file at ``path`` may mean, the first first."""
    package = path.split("/")[:-1]
    if node.level:
        if node.level - 1 > len(package):
            return []
        base = package[: len(package) - (node.level - 1)]
        return [".".join([*base, *([node.module] if node.module else [])])]
    if node.module:
        return [".".join([*package, node.module]), node.module]
    return []


@dataclass(frozen=True)
class _Reading:
    """What reading each module of the project pass needs (sent to each worker once)."""

    source: Path
    max_bytes: int
    modules: frozenset[str]
    # A qualified name left on CUDA by the run's target: where given, checks of CUDA's
    # availability are followed into the project modules a file imports.
    is_cuda_only: Callable[[str], bool] | None = None


def _read_file(reading: _Reading, item: tuple[str, str]) -> tuple[str, _Module | None]:
    """A module (by name and path relative to SRC) and what it binds; None when it binds nothing
    carried or cannot be read."""
    module, rel = item
    try:
        data = read_source(reading.source / rel, reading.max_bytes).data
    except NotRead:  # copied or reported by the tree migration itself
        return module, None
    passes_devices = any(literal in data for literal in _CUDA_LITERALS)
    if b"torch" not in data and b"*" not in data and not passes_devices:
        return module, None
    checks_cuda = reading.is_cuda_only is not None and _CHECKS_CUDA in data
    return module, _read_module(data, rel, reading.modules, passes_devices, checks_cuda)


_IN_NAME = re.compile(rb"[\w.]")
# A string literal that starts with CUDA's device name: a file holding one may pass a device to a
# function of another module.
_CUDA_LITERALS = (b'"cuda', b"'cuda")
# What a file checking that CUDA is available spells (``torch.cuda.is_available()``).
_CHECKS_CUDA = b"is_available"


def _read_module(
    data: bytes, path: str, modules: frozenset[str], passes_devices: bool, checks_cuda: bool
) -> _Module | None:
    statements = b"\n".join(_TOP_LEVEL_IMPORT.findall(b"\n" + data))
    try:
        tree = ast.parse(statements)
    except (SyntaxError, ValueError):
        return None  # an odd spelling (a continuation line): its names are not carried
    bindings, stars = [], []
    wants: list[tuple[str, str]] = []
    checked: set[str] = set()
    for node in tree.body:
        assert isinstance(node, ast.Import | ast.ImportFrom)
        for local, qualified, _ in import_bindings(node):
            if qualified.partition(".")[0] == _CARRIED_ROOT:
                bindings.append((local, qualified))
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            star = resolve_module(node, path, modules)
            if star is not None:
                stars.append(star)
        if passes_devices:
            wants.extend(_imported_functions(node, path, modules, data))
        if checks_cuda:
            checked.update(module for _, module in _imported_project_modules(node, path, modules))
            if isinstance(node, ast.ImportFrom):
                checked.update(filter(None, [resolve_module(node, path, modules)]))
    return _Module(
        tuple(bindings), tuple(stars), _public_names(data), tuple(wants), tuple(sorted(checked))
    )


def _imported_functions(
    node: ast.Import | ast.ImportFrom, path: str, modules: frozenset[str], data: bytes
) -> Iterator[tuple[str, str]]:
    """``(module, name)`` for each name an import takes from a project module, and for each
    function the module's text calls of a project module it imports whole (``utils.move(``)."""
    for local, whole in _imported_project_modules(node, path, modules):
        # Starting with the name's text, the pattern is searched for as fast as bytes.find.
        called = re.compile(re.escape(local.encode()) + rb"\.(\w+)[ \t]*\(")
        names = {
            match.group(1).decode()
            for match in called.finditer(data)
            if match.start() == 0 or not _IN_NAME.match(data, match.start() - 1)
        }
        yield from ((whole, name) for name in names)
    if isinstance(node, ast.ImportFrom):
        module = resolve_module(node, path, modules)
        if module is not None:
            yield from ((module, alias.name) for alias in node.names if alias.name != "*")


def _public_names(data: bytes) -> frozenset[str] | None:
    """A module's ``__all__`` of literal names (an empty set when it is not one): the first
    top-level assignment of a list or tuple to ``__all__``. Read from the statements at the start
    of a line that name it, never from a parse of the whole module (the migration parses it)."""
    if _DEFINES_ALL.search(b"\n" + data) is None:
        return None
    try:
        text, _ = decode(data)
    except UndecodableSource:
        return frozenset()
    for match in _ASSIGNS_ALL.finditer("\n" + text):
        statement = _statement_at(text, match.start())  # the line break put first: one less
        try:
            tree = ast.parse(statement) if statement is not None else None
        except (SyntaxError, ValueError):
            continue  # not code: a line of a docstring, say
        node = tree.body[0] if tree is not None and tree.body else None
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return frozenset(
                e.value
                for e in node.value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return frozenset()


def _statement_at(text: str, start: int) -> str | None:
    """The logical line that starts at ``start`` (None if it does not tokenize): a list of string
    literals is matched by a pattern, anything else is tokenized up to the line's end."""
    literal = _LITERAL_LIST.match(text, start)
    if literal is not None:
        return literal.group()
    lines = io.StringIO(text[start:]).readline
    try:
        for token in tokenize.generate_tokens(lines):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                return text[start : start + _offset(text, start, token.end)]
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _offset(text: str, start: int, position: tuple[int, int]) -> int:
    """The offset from ``start`` of a tokenizer position (1-based line, column) in ``text[start:]``."""
    line, column = position
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", start + offset) + 1 - start
    return offset + column


def project_names(
    source: Path,
    python_files: Iterable[str],
    max_bytes: int,
    jobs: int = 1,
    is_cuda_only: Callable[[str], bool] | None = None,
) -> ProjectNames:
    """The torch names every Python file of SRC exports, its star imports' included; the files are
    read by ``jobs`` worker processes (the migration's workers cannot start before this is known).
    With ``is_cuda_only``, also the modules that files checking CUDA's availability import, whose
    functions reaching a name it accepts are read when a file's migration asks."""
    by_module = {module_name(rel): rel for rel in python_files}
    shared = _Reading(source, max_bytes, frozenset(by_module), is_cuda_only)
    reads = parallel_map(_read_file, shared, list(by_module.items()), jobs)
    found = {module: read for module, read in reads if read is not None}

    def exports(module: str, seen: frozenset[str]) -> Iterator[tuple[str, str, bool]]:
        read = found.get(module)
        if read is None or module in seen:
            return
        pairs = list(read.bindings)
        for star in read.stars:
            pairs.extend(
                (name, q) for name, q, starred in exports(star, seen | {module}) if starred
            )
        for local, qualified in pairs:
            public = local[:1] != "_" and (read.public is None or local in read.public)
            yield local, qualified, public

    checked = {module for read in found.values() for module in read.checked}
    return ProjectNames(
        frozenset((module, *export) for module in found for export in exports(module, frozenset())),
        _device_functions(shared, by_module, found.values(), jobs),
        frozenset((module, by_module[module]) for module in checked),
        str(source),
        is_cuda_only,
    )


def _device_functions(
    reading: _Reading, by_module: dict[str, str], modules: Iterable[_Module], jobs: int
) -> frozenset[tuple[str, DeviceFunction]]:
    """The device parameters of the functions the modules holding a CUDA literal import."""
    wanted: dict[str, set[str]] = {}
    for read in modules:
        for module, name in read.wants:
            wanted.setdefault(module, set()).add(name)
    items = [
        (module, by_module[module], frozenset(names)) for module, names in sorted(wanted.items())
    ]
    return frozenset(
        (module, function)
        for module, functions in parallel_map(_read_functions, reading, items, jobs)
        for function in functions
    )


def _read_functions(
    reading: _Reading, item: tuple[str, str, frozenset[str]]
) -> tuple[str, tuple[DeviceFunction, ...]]:
    module, rel, names = item
    try:
        data = read_source(reading.source / rel, reading.max_bytes).data
    except NotRead:
        return module, ()
    return module, device_functions(data, names)
