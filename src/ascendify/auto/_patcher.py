"""The one place that patches: applies planned replacements, remembers the originals, puts them back."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ascendify.auto._npu import ServedAttribute

_MISSING = object()


@dataclass(frozen=True)
class Replacement:
    target: str
    owner: Any
    name: str
    value: Any


@dataclass
class _Applied:
    replacement: Replacement
    own_original: Any  # the owner's own attribute before patching, or _MISSING (inherited, absent)
    script_builtin: bool
    allowed_uninitialized: bool


Deferred = Mapping[str, Callable[[], Sequence[Replacement]]]


class Patcher:
    """Applies a set of replacements once; ``revert`` restores every attribute exactly as it was.

    Applying while applied is a no-op (idempotent); reverting while not applied is a no-op. Replacements
    in modules the program has not imported yet are deferred: they are applied right after the module is
    imported, so enabling never imports heavy modules (FSDP) that the program may not use.
    """

    def __init__(self) -> None:
        self._applied: list[_Applied] = []
        self._active = False
        self._on_import: _ApplyOnImport | None = None

    @property
    def active(self) -> bool:
        return self._active

    def apply(self, replacements: Sequence[Replacement], deferred: Deferred | None = None) -> None:
        if self._active:
            return
        self._active = True
        self._apply_all(replacements)
        if deferred:
            self._on_import = _ApplyOnImport(self, dict(deferred))
            sys.meta_path.insert(0, self._on_import)

    def revert(self) -> None:
        if self._on_import is not None:
            sys.meta_path.remove(self._on_import)
            self._on_import = None
        while self._applied:
            _revert_one(self._applied.pop())
        self._active = False

    def _apply_all(self, replacements: Sequence[Replacement]) -> None:
        patched = {(id(a.replacement.owner), a.replacement.name) for a in self._applied}
        try:
            for replacement in replacements:
                key = (id(replacement.owner), replacement.name)
                if (
                    key not in patched
                ):  # two names for one object (torch.autocast, torch.amp.autocast)
                    patched.add(key)
                    self._applied.append(_apply_one(replacement))
        except BaseException:
            self.revert()
            raise


class _ApplyOnImport(importlib.abc.MetaPathFinder):
    """Finds a watched module with the normal finders and applies its replacements once it has run."""

    def __init__(self, patcher: Patcher, pending: dict[str, Callable[[], Sequence[Replacement]]]):
        self.patcher = patcher
        self.pending = pending

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        build = self.pending.pop(fullname, None)
        if build is None:
            return None
        spec = importlib.util.find_spec(fullname)  # the pop above keeps this from finding us again
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module
        patcher = self.patcher

        def exec_module(module: types.ModuleType) -> None:
            run_module(module)
            if patcher._on_import is self:  # still enabled
                patcher._apply_all(build())

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _apply_one(replacement: Replacement) -> _Applied:
    owner, name, value = replacement.owner, replacement.name, replacement.value
    own_original = vars(owner).get(name, _MISSING)
    original = getattr(owner, name, _MISSING)  # missing: the row adds it (absent_ok)
    if isinstance(value, ServedAttribute):
        _install_served(owner, name, value)
    else:
        setattr(owner, name, value)
    return _Applied(
        replacement,
        own_original,
        _share_script_builtin(original, value),
        _allow_on_uninitialized(original, value),
    )


def _revert_one(applied: _Applied) -> None:
    owner, name = applied.replacement.owner, applied.replacement.name
    if isinstance(applied.replacement.value, ServedAttribute):
        _remove_served(owner, name)
    if applied.own_original is _MISSING:
        if name in vars(owner):
            delattr(owner, name)
    else:
        setattr(owner, name, applied.own_original)
    if applied.script_builtin:
        _script_builtins().pop(id(applied.replacement.value), None)
    if applied.allowed_uninitialized:
        _uninitialized_allowed().remove(applied.replacement.value)


# torch.jit.script compiles calls to torch functions by looking the function object up in a table of
# builtins; a wrapper must be listed under the same operator or scripting code that calls it fails.
def _share_script_builtin(original: Any, replacement: Any) -> bool:
    table = _script_builtins()
    operator = table.get(id(original))
    if operator is None or not callable(replacement):
        return False
    table[id(replacement)] = operator
    return True


def _script_builtins() -> dict[int, str]:
    from torch.jit._builtins import _get_builtin_table

    table: dict[int, str] = _get_builtin_table()  # type: ignore[no-untyped-call]
    return table


# Lazy modules' uninitialized parameters accept only listed tensor methods, and torch hands them the method
# it finds on torch.Tensor now: the wrapper of an allowed method must be allowed too (`.to("cuda")`).
def _allow_on_uninitialized(original: Any, replacement: Any) -> bool:
    allowed = _uninitialized_allowed()
    if original is _MISSING or not any(method is original for method in allowed):
        return False
    allowed.append(replacement)
    return True


def _uninitialized_allowed() -> list[Any]:
    from torch.nn import parameter

    allowed: list[Any] = parameter.UninitializedTensorMixin._allowed_methods  # type: ignore[attr-defined]
    return allowed


# A served attribute is removed from the module and served by the module's __getattr__, which Python
# calls only for missing names, so every read (including `from m import name`) passes through it.
_SERVED = "__ascendify_served__"


def _install_served(module: Any, name: str, attribute: ServedAttribute) -> None:
    if not isinstance(module, types.ModuleType):
        raise TypeError(f"served attributes live on modules, not on {module!r}")
    served: dict[str, ServedAttribute] | None = vars(module).get(_SERVED)
    if served is None:
        served = {}
        setattr(module, _SERVED, served)
        _chain_getattr(module, served)
    served[name] = attribute
    if name in vars(module):
        delattr(module, name)


def _chain_getattr(module: types.ModuleType, served: dict[str, ServedAttribute]) -> None:
    previous = vars(module).get("__getattr__")

    def __getattr__(name: str) -> Any:
        attribute = served.get(name)
        if attribute is not None:
            return attribute.read()
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    __getattr__.__ascendify_previous__ = previous  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]


def _remove_served(module: Any, name: str) -> None:
    served: dict[str, ServedAttribute] = vars(module)[_SERVED]
    del served[name]
    if served:
        return
    previous = module.__getattr__.__ascendify_previous__
    delattr(module, _SERVED)
    if previous is None:
        delattr(module, "__getattr__")
    else:
        module.__getattr__ = previous
