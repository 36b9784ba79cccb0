"""Qualified names (``torch.nn.Module.to``) to the object that owns the attribute."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any


class UnresolvedTargetError(LookupError):
    """A patch target that this torch does not have."""


def resolve_owner(qualified: str, absent_ok: bool = False) -> tuple[Any, str]:
    """The object holding the last component, importing submodules on the way (``torch.distributed.fsdp``).

    ``absent_ok``: the owner may lack the last component (a row that adds it).
    """
    parts = qualified.split(".")
    owner: Any = importlib.import_module(parts[0])
    path = parts[0]
    for part in parts[1:-1]:
        path = f"{path}.{part}"
        if hasattr(owner, part):
            owner = getattr(owner, part)
            continue
        try:
            owner = importlib.import_module(path)
        except ImportError as error:
            raise UnresolvedTargetError(qualified) from error
    if not (absent_ok or hasattr(owner, parts[-1])):
        raise UnresolvedTargetError(qualified)
    return owner, parts[-1]


def resolve(qualified: str) -> Any:
    owner, name = resolve_owner(qualified)
    return getattr(owner, name)


class NotLoadedError(LookupError):
    """The target lives in a module the program has not imported (yet)."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


def loaded_owner(qualified: str, absent_ok: bool = False) -> tuple[Any, str]:
    """Like :func:`resolve_owner`, but imports nothing: raises NotLoadedError naming the missing module.

    Module attributes are read from the module's namespace, so lazy module ``__getattr__`` hooks (which
    would import) are never triggered.
    """
    parts = qualified.split(".")
    path = parts[0]
    owner: Any = sys.modules.get(path)
    if owner is None:
        raise NotLoadedError(path)
    for part in parts[1:-1]:
        path = f"{path}.{part}"
        if path in sys.modules:
            owner = sys.modules[path]
        elif isinstance(owner, ModuleType):
            if part not in vars(owner):
                raise NotLoadedError(path)
            owner = vars(owner)[part]
        else:
            owner = getattr(owner, part)
    name = parts[-1]
    present = name in vars(owner) if isinstance(owner, ModuleType) else hasattr(owner, name)
    if not (present or absent_ok):
        raise UnresolvedTargetError(qualified)
    return owner, name
