"""Qualified names (``torch.nn.Module.to``) to the object that owns the attribute."""

from __future__ import annotations

import importlib
from typing import Any


class UnresolvedTargetError(LookupError):
    """A patch target that this torch does not have."""


def resolve_owner(qualified: str) -> tuple[Any, str]:
    """The object holding the last component, importing submodules on the way (``torch.distributed.fsdp``)."""
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
    if not hasattr(owner, parts[-1]):
        raise UnresolvedTargetError(qualified)
    return owner, parts[-1]


def resolve(qualified: str) -> Any:
    owner, name = resolve_owner(qualified)
    return getattr(owner, name)
