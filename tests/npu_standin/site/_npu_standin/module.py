"""Filling each generated torch_npu module from the API description read from the wheel."""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import json
import sys
import types
from pathlib import Path
from typing import Any, NoReturn

from _npu_standin.strict import (
    AsIs,
    Unemulated,
    checked,
    checked_class,
    checked_overloads,
    not_emulated,
    refuser,
    refusing,
)

API_FILE = Path(__file__).resolve().parents[1] / "torch_npu" / "_standin_api.json"


@functools.cache
def api() -> dict[str, Any]:
    """The generated description: torch_npu version, source wheel, and each module's names."""
    loaded: dict[str, Any] = json.loads(API_FILE.read_text(encoding="utf-8"))
    return loaded


class UnemulatedModule(types.ModuleType):
    """A torch_npu submodule the stand-in does not provide: using it fails loudly."""

    def __getattr__(self, name: str) -> NoReturn:
        not_emulated(f"{self.__name__}.{name}")


class UnemulatedModuleFinder(importlib.abc.MetaPathFinder):
    """Importing a torch_npu module the wheel has and the stand-in does not provide fails loudly."""

    def __init__(self, modules: set[str]) -> None:
        self.modules = modules

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname in self.modules:
            not_emulated(f"module {fullname}")


def install(name: str) -> None:
    """Give module ``name`` exactly the wheel's public names, each emulated or refusing."""
    from _npu_standin.emulation import EMULATED, EMULATED_PRIVATE

    module = sys.modules[name]
    description = api()["modules"][name]
    # Children first: a name of the parent that shadows a submodule (torch_npu.npu.mstx) wins.
    for child in description["children"]:
        importlib.import_module(child)
    for attribute, entry in description["names"].items():
        qualname = f"{name}.{attribute}"
        setattr(module, attribute, stand_in(qualname, entry, EMULATED))
    for qualname, value in EMULATED_PRIVATE.items():
        if qualname.rpartition(".")[0] == name:
            private = value() if qualname.endswith(".default_generators") else value
            setattr(module, qualname.rpartition(".")[2], private)
    module.__getattr__ = _missing(name)  # type: ignore[method-assign]
    if name == "torch_npu":
        from _npu_standin.placement import activate

        sys.meta_path.insert(0, UnemulatedModuleFinder(set(api()["other_modules"])))
        module.__version__ = api()["torch_npu_version"]  # type: ignore[attr-defined]
        activate(sys.modules["torch_npu.npu"])


def stand_in(qualname: str, entry: dict[str, Any], emulated: dict[str, Any]) -> Any:
    """What ``qualname`` is in the stand-in; one object per wheel definition, however re-exported."""
    kind = entry["kind"]
    if kind == "module":
        return sys.modules.get(entry["module"]) or UnemulatedModule(entry["module"])
    if kind in ("class", "function"):
        return _definition(entry, emulated)
    value = emulated.get(qualname)
    if kind == "operator":
        return checked_overloads(qualname, entry["overloads"], value or refuser(qualname))
    if value is None:
        return Unemulated(qualname)
    return value.value if isinstance(value, AsIs) else value


# Wheel definition (module.name where torch_npu defines it) -> its stand-in.
_definitions: dict[str, Any] = {}


def _definition(entry: dict[str, Any], emulated: dict[str, Any]) -> Any:
    defined_in = entry["defined_in"]
    if defined_in not in _definitions:
        implementation = emulated.get(defined_in)
        made: Any
        if isinstance(implementation, AsIs):
            made = implementation.value
        elif entry["kind"] == "class":
            made = checked_class(defined_in, entry, implementation)
        elif implementation is None:
            made = refusing(defined_in, entry["signature"])
        else:
            made = checked(defined_in, entry["signature"], implementation)
        _definitions[defined_in] = made
    return _definitions[defined_in]


def _missing(module: str) -> Any:
    def __getattr__(name: str) -> NoReturn:
        raise AttributeError(
            f"module {module!r} has no attribute {name!r} "
            f"(torch_npu {api()['torch_npu_version']} does not have it)"
        )

    return __getattr__
