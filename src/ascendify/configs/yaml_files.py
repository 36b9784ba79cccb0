"""YAML files: accelerate's config (``accelerate config`` writes it: ``distributed_type``,
``mixed_precision``, ``dynamo_config``) and the argument files transformers' ``HfArgumentParser``
reads (``ddp_backend: nccl``, ``tf32: true``, ``optim: ...`` at the top level).

The file is composed (PyYAML's node graph, with the position of every scalar), never loaded and dumped
again: an edit replaces the characters of one scalar, or removes the one line that holds a key, so
comments, quoting and layout stay as written.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from ascendify.configs.findings import ConfigFinding, line_span
from ascendify.configs.rules import NPU
from ascendify.configs.settings import NAMES, judge

# Accelerate's config is told by its one required key; an argument file by the settings it sets.
ACCELERATE_KEY = "distributed_type"
TRIGGERS = (ACCELERATE_KEY.encode(), *(f"{name}:".encode() for name in sorted(NAMES)))


def scan_yaml(text: str, target: str) -> Iterator[ConfigFinding]:
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except (yaml.YAMLError, ValueError, RecursionError):
        return  # not YAML this scan can read: left as it is
    for document in documents:
        if isinstance(document, yaml.MappingNode):
            yield from _mapping(text, document, target)


def _scalars(node: yaml.MappingNode) -> Iterator[tuple[str, yaml.ScalarNode, yaml.Node]]:
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and isinstance(key.value, str):
            yield key.value, key, value


def _mapping(text: str, node: yaml.MappingNode, target: str) -> Iterator[ConfigFinding]:
    accelerate = any(name == ACCELERATE_KEY for name, _, _ in _scalars(node))
    for name, key, value in _scalars(node):
        if isinstance(value, yaml.MappingNode) and name == "dynamo_config" and accelerate:
            for inner, inner_key, inner_value in _scalars(value):
                if inner == "dynamo_backend" and isinstance(inner_value, yaml.ScalarNode):
                    yield from _setting(text, inner, inner_key, inner_value, target)
        if not isinstance(value, yaml.ScalarNode):
            continue
        if name == ACCELERATE_KEY and value.value == "MULTI_GPU" and target == NPU:
            start, end = _value_span(text, value)
            yield ConfigFinding(
                "CFG201",
                key.start_mark.line + 1,
                value.end_mark.line + 1,
                text[key.start_mark.index : value.end_mark.index],
                "MULTI_GPU -> MULTI_NPU",
                (start, end, "MULTI_NPU"),
            )
        elif name in NAMES:
            yield from _setting(text, name, key, value, target)


def _setting(
    text: str, name: str, key: yaml.ScalarNode, value: yaml.ScalarNode, target: str
) -> Iterator[ConfigFinding]:
    verdict = judge(name, str(value.value), target)
    if verdict is None:
        return
    start, end = key.start_mark.index, value.end_mark.index
    edit = None
    if verdict.new is not None:
        edit = (*_value_span(text, value), verdict.new)
    elif verdict.drop:
        first, last = line_span(text, start, end)
        if text[first:start].strip() or key.start_mark.line != value.end_mark.line:
            return  # not a line of its own (a flow mapping): nothing this scan can drop safely
        edit = (first, last, "")
    line = key.start_mark.line + 1
    yield ConfigFinding(
        verdict.code, line, value.end_mark.line + 1, text[start:end], verdict.message, edit
    )


def _value_span(text: str, value: yaml.ScalarNode) -> tuple[int, int]:
    """The characters of a scalar's value, inside its quotes if it has them."""
    start, end = value.start_mark.index, value.end_mark.index
    if value.style in ("'", '"'):
        start, end = start + 1, end - 1
    return start, end
