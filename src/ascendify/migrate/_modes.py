"""What a run asks for beyond the default NPU rewrite: target, multi-card, user rules, and the on/off modes
(device pinning, ModelArts paths, replaced unsupported APIs, ...). Plain picklable data: it rides in
:class:`ascendify.migrate.Settings` to worker processes and reaches every checker through
:attr:`ascendify.migrate.Context.modes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol


class Named(Protocol):
    """An on/off mode as :meth:`Modes.has` asks about it (``_rule.Mode``, which stands above)."""

    @property
    def name(self) -> str: ...


class Target(str, Enum):
    NPU = "npu"  # torch_npu code for Ascend hosts
    PORTABLE = "portable"  # public torch APIs only: NPU, CUDA or CPU, whichever the host has


EVERY_TARGET = frozenset(Target)  # for rules that apply whatever the target


@dataclass(frozen=True)
class DistributedMode:
    """``distributed -m MAIN.py -t MODEL_VAR``: single card -> one process per card."""

    main: str  # the entry file, relative to SRC, "/"-separated
    model: str = "model"  # the model variable, e.g. "model" or "self.model"


@dataclass(frozen=True)
class RenameFunction:
    """User rule: calls of ``old`` (a qualified name) call ``new`` instead."""

    old: str
    new: str
    origin: str  # "rules.toml:3", for messages


@dataclass(frozen=True)
class RenameModule:
    """User rule: the module ``old`` (and everything under it) is ``new``, in imports and uses."""

    old: str
    new: str
    origin: str


@dataclass(frozen=True)
class ChangeArgument:
    """User rule: in calls of ``function``, set (or with ``value=None`` remove) one argument."""

    function: str
    keyword: str | None  # the argument's keyword
    position: int | None  # or its position (a keyword argument of that name is also matched)
    value: str | None  # Python source of the new value; None removes the argument
    origin: str


UserRule = RenameFunction | RenameModule | ChangeArgument


@dataclass(frozen=True)
class Modes:
    target: Target = Target.NPU
    distributed: DistributedMode | None = None
    user_rules: tuple[UserRule, ...] = ()
    # The on/off modes switched on, by mode name ("specify-device", "modelarts", "replace"): a mode
    # with a command-line switch needs no field of its own.
    switches: frozenset[str] = frozenset()
    tune: frozenset[str] = frozenset()  # codes of the --tune rules to apply

    def has(self, mode: Named) -> bool:
        """Whether the on/off ``mode`` is switched on."""
        return mode.name in self.switches
