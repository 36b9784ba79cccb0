"""``--rules FILE``: user rules in JSON (always) or TOML (Python 3.11+, via tomllib).

The format (docs/migrate-modes.md)::

    [[rename_function]]            # calls of old call new
    old = "mylib.cuda_ops.fused_adam"
    new = "mylib.npu_ops.fused_adam"

    [[rename_module]]              # the module and everything under it, in imports and uses
    old = "mylib.cuda_ops"
    new = "mylib.npu_ops"

    [[change_argument]]            # set (value) or drop (remove = true) one argument
    function = "torch.load"
    keyword = "map_location"       # and/or position = 1
    value = '"cpu"'                # Python source of the new value

JSON holds the same tables as lists: ``{"rename_function": [{"old": ..., "new": ...}], ...}``.
msFmkTransplt's custom rule files are read too: ``{"rules": {"FuncNameModifyRule": [{"old_name": ...,
"new_name": ..., "replace_module": ...}], "ModuleNameModifyRule": [{"old_name": ..., "new_name": ...,
"parent_module": ...}], "ArgsModifyRule": [{"func_name": ..., "arg_idx": ..., "arg_keyword": ...,
"arg_new": ...}]}}``, each kind mapped to the rule above that does the same.
Every problem is reported with the file, the entry and, where the text shows it, the line. The file
is read like a source file (:func:`ascendify._fs.read_source`: the same size limit) and loads in
time linear in its size.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import json
import re
import sys
from collections.abc import Callable, Mapping
from functools import partial
from keyword import iskeyword
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.migrate._modes import ChangeArgument, RenameFunction, RenameModule, UserRule
from ascendify.textfile import parse_bounded, parse_json, read_text

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_DUNDER = re.compile(r"^__\w*__$")
# A rule file is a short list written by hand: a larger one is a mistake (and 8 MB of rules held
# 150 MB of memory).
MAX_RULE_FILE_BYTES = 1 << 20
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
_KEYS = {
    "rename_function": ({"old", "new"}, set()),
    "rename_module": ({"old", "new"}, set()),
    "change_argument": ({"function"}, {"keyword", "position", "value", "remove"}),
    # msFmkTransplt's custom rule file: {"rules": {"FuncNameModifyRule": [...], ...}}
    "FuncNameModifyRule": ({"old_name", "new_name"}, {"replace_module"}),
    "ModuleNameModifyRule": ({"old_name", "new_name"}, {"parent_module"}),
    "ArgsModifyRule": ({"func_name"}, {"arg_idx", "arg_keyword", "arg_new"}),
}


class _Problem(Exception):
    def __init__(self, message: str, needle: str | None = None) -> None:
        super().__init__(message)
        self.needle = needle  # text whose line locates the problem


def load_rule_file(path: Path, *, allow_builtins: bool = False) -> tuple[UserRule, ...]:
    """Parse and validate a rule file; any problem is an :class:`AscendifyError` naming its place.

    A rule on a builtin (``print``, ``open``: every file calls them) or a second rename of the same
    name is refused unless ``allow_builtins``: such a rule is more often a slip than a wish."""
    try:
        text = read_text(path, "--rules", limit=MAX_RULE_FILE_BYTES)
    except FileNotFoundError as error:
        raise AscendifyError(f"--rules {path}: cannot read: {error.strerror}") from None
    data = _parse(path, text)
    lines = _Lines(path, text)
    builders = _BUILDERS
    if set(data) == {"rules"} and isinstance(data["rules"], dict):
        data, builders = data["rules"], _MSFT_BUILDERS  # msFmkTransplt's format
    rules: list[UserRule] = []
    for table, entries in data.items():
        if table not in builders:
            raise AscendifyError(
                f"{lines.where(table)}: unknown rule kind {table!r} "
                f"(expected one of: {', '.join(builders)})"
            )
        if not isinstance(entries, list):
            raise AscendifyError(f"{lines.where(table)}: {table} must be a list of tables")
        for index, entry in enumerate(entries, start=1):
            label = f"{table}[{index}]"
            try:
                origin = lines.where(_first_value(entry), after_previous_of=table)
                rules.append(_importable_target(builders[table](entry, origin)))
            except _Problem as problem:
                raise AscendifyError(f"{lines.where(problem.needle)}: {label}: {problem}") from None
    if not allow_builtins:
        _refuse_surprises(rules)
    return tuple(rules)


def _importable_target(rule: UserRule) -> UserRule:
    """A rename leads to a name the result can import: not Python's builtins (``import
    __builtins__`` was written, and a renamed call ran ``exec``), not a dunder name."""
    if isinstance(rule, ChangeArgument):
        return rule
    parts = rule.new.split(".")
    wrong = next((part for part in parts if _DUNDER.match(part)), None)
    why = f"{wrong!r} is a dunder name" if wrong else ""
    if parts[0] == "builtins":
        why = "'builtins' holds Python's own functions (exec, eval, open)"
    if why:
        raise _Problem(f"new {rule.new!r} is not an importable name: {why}", rule.new)
    return rule


def _refuse_surprises(rules: list[UserRule]) -> None:
    renamed: dict[str, str] = {}
    for rule in rules:
        name = rule.function if isinstance(rule, ChangeArgument) else rule.old
        bare = name.removeprefix("builtins.")
        if "." not in bare and bare in _BUILTINS:
            raise AscendifyError(
                f"{rule.origin}: the rule changes the builtin {bare!r}, which every file may call; "
                "pass --allow-builtin-rules if that is meant"
            )
        if isinstance(rule, ChangeArgument):
            continue
        if name in renamed:
            raise AscendifyError(
                f"{rule.origin}: {name!r} is renamed again (first at {renamed[name]}); "
                "pass --allow-builtin-rules if the later rule is meant to win"
            )
        renamed[name] = rule.origin


def _parse(path: Path, text: str) -> Mapping[str, Any]:
    data: Any
    if path.suffix not in (".toml", ".json"):
        raise AscendifyError(f"--rules {path}: the file must end in .json or .toml")
    what = f"--rules {path}"
    try:
        if path.suffix == ".toml":
            data = parse_bounded(partial(_parse_toml, path), text, what, AscendifyError)
        else:
            data = parse_json(text, what, AscendifyError)
    except json.JSONDecodeError as error:
        raise AscendifyError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
    if not isinstance(data, dict):
        raise AscendifyError(f"{path}: the top level must be a table of rule lists")
    return data


def _parse_toml(path: Path, text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise AscendifyError(f"{path}: not valid TOML: {error}") from error
    raise AscendifyError(f"--rules {path}: TOML needs Python 3.11 or newer; use JSON")


def _first_value(entry: object) -> str | None:
    if isinstance(entry, dict):
        for value in entry.values():
            if isinstance(value, str):
                return value
    return None


class _Lines:
    """``file:line`` of a text in the rule file.

    The entries of one table appear in the file in their order, so each is looked for after the
    previous one of its table: every entry located costs only the text between it and the last.
    """

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text
        self._line_ends = [match.start() for match in re.finditer("\n", text)]
        self._cursors: dict[str, int] = {}

    def where(self, needle: str | None, after_previous_of: str | None = None) -> str:
        """``file:line`` where ``needle`` occurs (after the previous entry of the table), else ``file``."""
        if not needle:
            return str(self.path)
        start = 0 if after_previous_of is None else self._cursors.get(after_previous_of, 0)
        at = self.text.find(needle, start)
        if at < 0:
            return str(self.path)
        if after_previous_of is not None:
            self._cursors[after_previous_of] = at + len(needle)
        return f"{self.path}:{bisect.bisect_left(self._line_ends, at) + 1}"


def _checked(entry: object, table: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise _Problem("each rule must be a table of keys")
    required, optional = _KEYS[table]
    missing = required - entry.keys()
    if missing:
        raise _Problem(f"missing key(s): {', '.join(sorted(missing))}", _first_value(entry))
    unknown = entry.keys() - required - optional
    if unknown:
        raise _Problem(
            f"unknown key(s): {', '.join(sorted(unknown))} "
            f"(allowed: {', '.join(sorted(required | optional))})",
            sorted(unknown)[0],
        )
    return entry


def _dotted(entry: dict[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not _DOTTED.match(value):
        raise _Problem(
            f"{key} must be a dotted Python name such as 'torch.cuda.synchronize', not {value!r}",
            value if isinstance(value, str) else None,
        )
    reserved = [part for part in value.split(".") if iskeyword(part)]
    if reserved:
        raise _Problem(
            f"{key} {value!r} holds the Python keyword {reserved[0]!r}, which no name can be",
            value,
        )
    return value


def _rename_function(entry: object, origin: str) -> UserRule:
    checked = _checked(entry, "rename_function")
    return RenameFunction(_dotted(checked, "old"), _dotted(checked, "new"), origin)


def _rename_module(entry: object, origin: str) -> UserRule:
    checked = _checked(entry, "rename_module")
    return RenameModule(_dotted(checked, "old"), _dotted(checked, "new"), origin)


def _change_argument(entry: object, origin: str) -> UserRule:
    checked = _checked(entry, "change_argument")
    function = _dotted(checked, "function")
    keyword = checked.get("keyword")
    position = checked.get("position")
    if keyword is not None and (
        not isinstance(keyword, str) or not _IDENTIFIER.match(keyword) or iskeyword(keyword)
    ):
        raise _Problem(f"keyword must be an argument name, not {keyword!r}", function)
    if position is not None and (
        isinstance(position, bool) or not isinstance(position, int) or position < 0
    ):
        raise _Problem(f"position must be a number >= 0, not {position!r}", function)
    if keyword is None and position is None:
        raise _Problem("give the argument's keyword, its position, or both", function)
    remove = checked.get("remove", False)
    value = checked.get("value")
    if not isinstance(remove, bool):
        raise _Problem(f"remove must be true or false, not {remove!r}", function)
    if remove == (value is not None):
        raise _Problem("give either value (the new argument) or remove = true", function)
    if value is not None:
        if not isinstance(value, str):
            raise _Problem(f"value must be Python source text in a string, not {value!r}", function)
        try:
            ast.parse(value, mode="eval")
        except SyntaxError as error:
            raise _Problem(
                f"value {value!r} is not a Python expression: {error.msg}", value
            ) from None
    return ChangeArgument(function, keyword, position, value, origin)


_BUILDERS: dict[str, Callable[[object, str], UserRule]] = {
    "rename_function": _rename_function,
    "rename_module": _rename_module,
    "change_argument": _change_argument,
}


# msFmkTransplt's rule kinds, mapped to the same rules. Its names match a call by its qualified
# name, or a bare name by the called name whatever the receiver (``"old_name": "cuda"``).


def _func_name_modify(entry: object, origin: str) -> UserRule:
    """``old_name`` -> ``new_name``; without ``replace_module`` only the last name changes."""
    checked = _checked(entry, "FuncNameModifyRule")
    old, new = _dotted(checked, "old_name"), _dotted(checked, "new_name")
    replace_module = checked.get("replace_module", False)
    if not isinstance(replace_module, bool):
        raise _Problem(f"replace_module must be true or false, not {replace_module!r}", old)
    module = old.rpartition(".")[0]
    if not replace_module and module and "." not in new:
        new = f"{module}.{new}"
    return RenameFunction(old, new, origin)


def _module_name_modify(entry: object, origin: str) -> UserRule:
    """The module ``parent_module.old_name`` is ``parent_module.new_name``."""
    checked = _checked(entry, "ModuleNameModifyRule")
    old, new = _dotted(checked, "old_name"), _dotted(checked, "new_name")
    parent = checked.get("parent_module")
    if parent is not None:
        parent = _dotted(checked, "parent_module")
        old, new = f"{parent}.{old}", f"{parent}.{new}"
    return RenameModule(old, new, origin)


def _args_modify(entry: object, origin: str) -> UserRule:
    """The argument at ``arg_idx`` (or named ``arg_keyword``) becomes ``arg_new``; an empty
    ``arg_new`` removes it."""
    checked = _checked(entry, "ArgsModifyRule")
    value = checked.get("arg_new")
    position = checked.get("arg_idx")
    change = {
        "function": checked["func_name"],
        **({} if position is None or position == -1 else {"position": position}),
        **({} if checked.get("arg_keyword") is None else {"keyword": checked["arg_keyword"]}),
        **({"remove": True} if value in (None, "") else {"value": value}),
    }
    return _change_argument(change, origin)


_MSFT_BUILDERS: dict[str, Callable[[object, str], UserRule]] = {
    "FuncNameModifyRule": _func_name_modify,
    "ModuleNameModifyRule": _module_name_modify,
    "ArgsModifyRule": _args_modify,
}
