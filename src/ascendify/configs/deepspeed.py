"""DeepSpeed configs: the ops they make DeepSpeed load, and their CUDA-only settings.

A JSON file is parsed by a small JSON reader that keeps where every value is (the standard
library's does not), so an edit replaces one string's characters and everything else stays as
written. A config written in Python as a dict literal (``ds_config = {...}``, passed to
``deepspeed.initialize``) is read from its syntax tree into the same positioned values
(:func:`dict_findings`), so both are judged by one set of checks.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ascendify.configs.findings import ConfigFinding, line_of
from ascendify.configs.rules import NPU
from ascendify.source import SourceText

# A DeepSpeed config has at least one of these at its top level (the batch size is required).
_DEEPSPEED_KEYS = frozenset(
    {"train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization"}
)
TRIGGERS = tuple(f'"{key}"'.encode() for key in sorted(_DEEPSPEED_KEYS))
# In Python, the keys as whole words: a dict literal may quote them either way.
TRIGGER_WORDS = tuple(sorted(_DEEPSPEED_KEYS))
_ONE_BIT = frozenset({"onebitadam", "zerooneadam", "onebitlamb"})
_MAX_DEPTH = 64
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Value:
    """A JSON value and where it is: ``text[start:end]``. Objects keep their members in order."""

    start: int
    end: int
    data: object  # str, int, float, bool, None, or list[Value], or list[Member]
    is_object: bool = False

    def member(self, name: str) -> Member | None:
        if not self.is_object:
            return None
        assert isinstance(self.data, list)
        return next((m for m in self.data if isinstance(m, Member) and m.name == name), None)

    def get(self, *path: str) -> Value | None:
        value: Value | None = self
        for name in path:
            member = None if value is None else value.member(name)
            value = None if member is None else member.value
        return value

    def is_true(self) -> bool:
        return self.data is True


@dataclass(frozen=True)
class Member:
    name: str
    key_start: int
    value: Value


class _Reader:
    _NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
    _BLANK = re.compile(r"[ \t\n\r]*")

    def __init__(self, text: str) -> None:
        self.text = text

    def blank(self, at: int) -> int:
        match = self._BLANK.match(self.text, at)
        assert match is not None
        return match.end()

    def value(self, at: int, depth: int) -> Value:
        if depth > _MAX_DEPTH:
            raise ValueError("nested too deeply")
        at = self.blank(at)
        char = self.text[at : at + 1]
        if char == "{":
            return self.object(at, depth)
        if char == "[":
            return self.array(at, depth)
        if char == '"':
            string, end = self.string(at)
            return Value(at, end, string)
        for word, data in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, at):
                return Value(at, at + len(word), data)
        number = self._NUMBER.match(self.text, at)
        if number is None:
            raise ValueError(f"unexpected character at {at}")
        return Value(at, number.end(), json.loads(number.group()))

    def string(self, at: int) -> tuple[str, int]:
        string, end = _DECODER.raw_decode(self.text, at)
        if not isinstance(string, str):
            raise ValueError(f"expected a string at {at}")
        return string, end

    def array(self, start: int, depth: int) -> Value:
        items: list[Value] = []
        at = self.blank(start + 1)
        if self.text.startswith("]", at):
            return Value(start, at + 1, items)
        while True:
            item = self.value(at, depth + 1)
            items.append(item)
            at = self.blank(item.end)
            if self.text.startswith("]", at):
                return Value(start, at + 1, items)
            at = self.expect(",", at)

    def object(self, start: int, depth: int) -> Value:
        members: list[Member] = []
        at = self.blank(start + 1)
        if self.text.startswith("}", at):
            return Value(start, at + 1, members, is_object=True)
        while True:
            if not self.text.startswith('"', at):
                raise ValueError(f"expected a key at {at}")
            name, after = self.string(at)
            value = self.value(self.expect(":", self.blank(after)), depth + 1)
            members.append(Member(name, at, value))
            at = self.blank(value.end)
            if self.text.startswith("}", at):
                return Value(start, at + 1, members, is_object=True)
            at = self.blank(self.expect(",", at))

    def expect(self, char: str, at: int) -> int:
        if not self.text.startswith(char, at):
            raise ValueError(f"expected {char!r} at {at}")
        return at + 1


def read_json(text: str) -> Value | None:
    """The document with its positions; None if it is not JSON."""
    try:
        reader = _Reader(text)
        document = reader.value(0, 0)
        if reader.blank(document.end) != len(text):
            return None
        return document
    except (ValueError, IndexError, json.JSONDecodeError):
        return None


def scan_deepspeed(text: str, target: str) -> Iterator[ConfigFinding]:
    root = read_json(text)
    if root is not None:
        yield from _config_findings(text, root, target)


def dict_findings(node: ast.Dict, source: SourceText, target: str) -> Iterator[ConfigFinding]:
    """The findings of a Python dict literal that is a DeepSpeed config (none for another dict).
    Values that are not literals (a name, a call) are unknown, and judged as absent settings."""
    yield from _config_findings(source.text, _python_value(node, source, 0), target)


def _python_value(node: ast.expr, source: SourceText, depth: int) -> Value:
    start = source.offset(node.lineno, node.col_offset)
    end = source.offset(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset)
    if depth > _MAX_DEPTH:
        return Value(start, end, None)
    if isinstance(node, ast.Dict):
        members = [
            Member(key.value, source.offset(key.lineno, key.col_offset), value)
            for key, value_node in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
            for value in (_python_value(value_node, source, depth + 1),)
        ]
        return Value(start, end, members, is_object=True)
    if isinstance(node, ast.List | ast.Tuple):
        return Value(start, end, [_python_value(item, source, depth + 1) for item in node.elts])
    if isinstance(node, ast.Constant) and _plain(node.value, source.text[start:end]):
        return Value(start, end, node.value)
    return Value(start, end, None)


def _plain(value: object, written: str) -> bool:
    """A literal whose text is the value itself: a string is edited inside its quotes, so only a
    string written as one pair of quotes around its characters is taken as known."""
    if not isinstance(value, str):
        return value is None or isinstance(value, bool | int | float)
    return written[:1] in "'\"" and written[-1:] == written[:1] and written[1:-1] == value


def _config_findings(text: str, root: Value, target: str) -> Iterator[ConfigFinding]:
    if not root.is_object or not any(root.member(k) for k in _DEEPSPEED_KEYS):
        return
    yield from _optimizer(text, root, target)
    for path, op_name in (
        (("sparse_attention",), "sparse_attn"),
        (("data_efficiency", "data_routing", "random_ltd", "enabled"), "random_ltd"),
        (("zero_optimization", "zero_quantized_weights"), "quantizer"),
        (("zero_optimization", "zero_quantized_gradients"), "quantizer"),
        (("compile", "deepcompile"), "dc"),
    ):
        value = root.get(*path)
        if value is not None and (value.is_object or value.is_true()):
            yield _report(
                text,
                "CFG301",
                value,
                path,
                f"loads the {op_name} op: DeepSpeed has no NPU builder for it",
            )
    amp = root.get("amp", "enabled")
    if amp is not None and amp.is_true():
        yield _report(
            text,
            "CFG303",
            amp,
            ("amp", "enabled"),
            'NVIDIA apex AMP: use the "bf16" or "fp16" section',
        )


def _optimizer(text: str, root: Value, target: str) -> Iterator[ConfigFinding]:
    kind = root.get("optimizer", "type")
    if kind is None or not isinstance(kind.data, str):
        return
    name = kind.data.lower()
    offload = root.get("zero_optimization", "offload_optimizer", "device")
    on_cpu = (offload is not None and offload.data in ("cpu", "nvme")) or bool(
        (legacy := root.get("zero_optimization", "cpu_offload")) and legacy.is_true()
    )
    path = ("optimizer", "type")
    if name == "lamb" or (name == "lion" and not on_cpu):
        op_name = "fused_lamb" if name == "lamb" else "fused_lion"
        yield _report(
            text,
            "CFG301",
            kind,
            path,
            f"loads the {op_name} op: DeepSpeed has no NPU builder for it; use AdamW",
        )
    if name not in _ONE_BIT:
        return
    backend = root.get("optimizer", "params", "comm_backend_name")
    if backend is None:
        yield _report(
            text,
            "CFG303",
            kind,
            path,
            'a 1-bit optimizer defaults to nccl: set "comm_backend_name": "hccl"',
        )
    elif backend.data == "nccl" and target == NPU:
        op = text[backend.start : backend.end]
        line = line_of(text, backend.start)
        edit = (backend.start + 1, backend.end - 1, "hccl")
        yield ConfigFinding("CFG302", line, line, f"comm_backend_name {op}", "nccl -> hccl", edit)


def _report(
    text: str, code: str, value: Value, path: tuple[str, ...], message: str
) -> ConfigFinding:
    return ConfigFinding(
        code, line_of(text, value.start), line_of(text, value.end), ".".join(path), message
    )
