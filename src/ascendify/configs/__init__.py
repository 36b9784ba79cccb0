"""Framework configuration: what in a project's transformers, accelerate and DeepSpeed settings needs
a change (or a human) on an Ascend NPU. Pure: text in, :class:`ConfigFinding` objects out.

Both ``migrate`` (which applies the edits) and ``analyze`` (which lists the findings) stand on it;
the rules are one table (:mod:`ascendify.configs.rules`). Files other than Python are recognised by
their suffix and a cheap byte test (:func:`config_kind`): accelerate config and argument YAML files,
DeepSpeed JSON configs, shell scripts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import Enum

from ascendify.configs import deepspeed, shell, yaml_files
from ascendify.configs.findings import ConfigFinding
from ascendify.configs.python import TRIGGER_WORDS, TRIGGERS, call_findings
from ascendify.configs.rules import NPU, PORTABLE, RULES, ConfigRule, Left


class Kind(str, Enum):
    YAML = "yaml"
    DEEPSPEED = "deepspeed"
    SHELL = "shell"


_SUFFIXES = {
    ".yaml": Kind.YAML,
    ".yml": Kind.YAML,
    ".json": Kind.DEEPSPEED,
    ".sh": Kind.SHELL,
    ".bash": Kind.SHELL,
}
CONFIG_SUFFIXES = tuple(_SUFFIXES)
_TRIGGERS = {
    Kind.YAML: yaml_files.TRIGGERS,
    Kind.DEEPSPEED: deepspeed.TRIGGERS,
    Kind.SHELL: shell.TRIGGERS,
}
_SCANS: dict[Kind, Callable[[str, str], Iterator[ConfigFinding]]] = {
    Kind.YAML: yaml_files.scan_yaml,
    Kind.DEEPSPEED: deepspeed.scan_deepspeed,
    Kind.SHELL: shell.scan_shell,
}


def kind_of(path: str) -> Kind | None:
    """The kind of configuration a file of this name may be (None: not one of them). Asked of every
    file of a project: string operations, not a path object."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return None if dot <= 0 else _SUFFIXES.get(name[dot:].lower())


def config_kind(path: str, data: bytes) -> Kind | None:
    """The kind of configuration this file is worth reading as: its suffix says which, and it holds
    one of that kind's tokens (most JSON and YAML files of a project are data, not configs)."""
    kind = kind_of(path)
    if kind is None or not any(token in data for token in _TRIGGERS[kind]):
        return None
    return kind


def scan_config(kind: Kind, text: str, target: str = NPU) -> list[ConfigFinding]:
    """Every finding of one configuration file, in the order of the text."""
    found = list(_SCANS[kind](text, target))
    return sorted(found, key=lambda finding: (finding.start_line, finding.end_line, finding.code))


__all__ = [
    "CONFIG_SUFFIXES",
    "NPU",
    "PORTABLE",
    "RULES",
    "TRIGGERS",
    "TRIGGER_WORDS",
    "ConfigFinding",
    "ConfigRule",
    "Kind",
    "Left",
    "call_findings",
    "config_kind",
    "kind_of",
    "scan_config",
]
