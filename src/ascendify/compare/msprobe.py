"""msprobe's dump layout, written from a compare dump and read as one (pure file work, no torch).

msprobe (the ``mindstudio-probe`` package) dumps a PyTorch run's statistics as::

    DUMP/step<S>/rank<R>/dump.json        {"task", "level", "framework", "data": {NAME: entry}}
    DUMP/step<S>/rank<R>/construct.json   {NAME: the name of the module call it ran in, or null}
    DUMP/step<S>/rank<R>/stack.json       the Python stacks of the calls (ours: none)

(``proc<PID>`` instead of ``rank<R>`` in a process without torch.distributed). A module call is
``Module.<path>.<Class>.forward.<n>``, an operator call ``Functional.gelu.<n>.forward``,
``Tensor.add.<n>.forward`` or ``Torch.softmax.<n>.forward`` (n counts calls of that operator in
the step), and each tensor is ``{"type", "dtype", "shape", "Max", "Min", "Mean", "Norm",
"requires_grad"}``. Writing it lets msprobe's own compare and visualiser read an ascendify dump;
reading it lets ``ascendify compare`` take a run that msprobe dumped (a GPU run, say) as A or B.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ascendify._fs import output_file
from ascendify.compare.records import API, FORWARD, Dump, Record, TensorStats, rank_number
from ascendify.errors import AscendifyError
from ascendify.textfile import read_json

DUMP_JSON, CONSTRUCT_JSON, STACK_JSON = "dump.json", "construct.json", "stack.json"
_MODULE = re.compile(
    r"Module\.(?P<path>.+)\.(?P<cls>[^.]+)\.(?P<pass>forward|backward)\.(?P<n>\d+)"
)
_OPERATOR = re.compile(r"(?P<kind>[A-Za-z]+)\.(?P<name>.+)\.(?P<n>\d+)\.(?P<pass>forward|backward)")
# Our operator names (torch.overrides.resolve_name) and msprobe's prefixes for them.
_PREFIXES = (
    ("torch.nn.functional.", "Functional."),
    ("torch.Tensor.", "Tensor."),
    ("torch.", "Torch."),
)
_STEP_DIR = re.compile(r"step(0|[1-9][0-9]{0,8})")
_RANK_DIR = re.compile(r"rank(0|[1-9][0-9]{0,6})")


# -- writing --------------------------------------------------------------------------------------


def msprobe_operator(name: str) -> str:
    for ours, theirs in _PREFIXES:
        if name.startswith(ours):
            return theirs + name[len(ours) :]
    return name


def _tensor(stats: TensorStats) -> dict[str, Any]:
    return {
        "type": "torch.Tensor",
        "dtype": f"torch.{stats.dtype}",
        "shape": list(stats.shape),
        "Max": stats.max,
        "Min": stats.min,
        "Mean": stats.mean,
        "Norm": stats.norm,
        "requires_grad": stats.requires_grad,
    }


def _is_root(record: Record) -> bool:
    """The model's own call: msprobe records the modules inside the model it was given."""
    return "." not in record.path and record.path.partition("#")[0] == record.module_class


def _names(records: list[Record]) -> dict[Record, str]:
    """msprobe's name of each module and operator call of one rank's step, in execution order."""
    names: dict[Record, str] = {}
    operator_calls: Counter[str] = Counter()
    for record in sorted(records, key=lambda r: r.start):
        if record.kind == FORWARD and record.module_class and not _is_root(record):
            names[record] = f"Module.{record.path}.{record.module_class}.forward.{record.call}"
        elif record.kind == API:
            operator = msprobe_operator(record.path.rpartition(":")[2])
            names[record] = f"{operator}.{operator_calls[operator]}.forward"
            operator_calls[operator] += 1
    return names


def _parents(records: list[Record], names: dict[Record, str]) -> dict[str, str | None]:
    """Each named call -> the named module call it ran in (the innermost that encloses it)."""
    parents: dict[str, str | None] = {}
    open_calls: list[Record] = []
    for record in sorted(names, key=lambda r: r.start):
        while open_calls and not open_calls[-1].encloses(record):
            open_calls.pop()
        parents[names[record]] = names[open_calls[-1]] if open_calls else None
        if record.kind == FORWARD:
            open_calls.append(record)
    return {name: parents[name] for name in names.values()}


def _rank_folder(dump: Dump, rank: int) -> str:
    """``rank<R>`` under torch.distributed, else ``proc<PID>``, as msprobe names them."""
    header = dump.manifest.get("ranks", {}).get(str(rank), {})
    if int(header.get("world_size", 1)) > 1:
        return f"rank{rank}"
    return f"proc{int(header.get('pid', 0))}"


def write_msprobe(dump: Dump, out: Path) -> list[Path]:
    """``step<S>/rank<R>/{dump,construct,stack}.json`` under ``out`` for every step and rank."""
    by_place: dict[tuple[int, int], list[Record]] = defaultdict(list)
    for record in dump.records:
        by_place[(record.step, record.rank)].append(record)
    written = []
    level = "mix" if any(r.kind == API for r in dump.records) else "L0"
    for (step, rank), records in sorted(by_place.items()):
        names = _names(records)
        ordered = sorted(names, key=lambda r: r.order)  # msprobe writes a call when it ends
        data = {
            names[r]: {
                "input_args": [_tensor(t) for t in r.inputs],
                "input_kwargs": {},
                "output": [_tensor(t) for t in r.outputs],
                "parameters": {},
            }
            for r in ordered
        }
        folder = out / f"step{step}" / _rank_folder(dump, rank)
        folder.mkdir(parents=True, exist_ok=True)
        documents = {
            DUMP_JSON: {
                "task": "statistics", "level": level, "framework": "pytorch",
                "dump_data_dir": None, "data": data,
            },
            CONSTRUCT_JSON: _parents(records, names),
            STACK_JSON: {},
        }  # fmt: skip
        for file_name, document in documents.items():
            path = folder / file_name
            with output_file(path, out) as stream:
                stream.write(json.dumps(document, indent=1).encode("utf-8"))
            written.append(path)
    return written


# -- reading --------------------------------------------------------------------------------------


def is_msprobe_dump(directory: Path) -> bool:
    return any(True for _ in _rank_folders(directory))


def _rank_folders(directory: Path) -> Iterator[tuple[int, Path]]:
    """(step, rank folder) of a msprobe dump given as its root, a step folder or a rank folder."""
    if (directory / DUMP_JSON).is_file():
        yield _step_of(directory.parent), directory
        return
    steps = (
        [d for d in directory.iterdir() if _STEP_DIR.fullmatch(d.name)]
        if directory.is_dir()
        else []
    )
    for step_folder in sorted(steps or [directory], key=lambda d: d.name):
        if not step_folder.is_dir():
            continue
        for folder in sorted(step_folder.iterdir()):
            if (folder / DUMP_JSON).is_file():
                yield _step_of(step_folder), folder


def _step_of(folder: Path) -> int:
    match = _STEP_DIR.fullmatch(folder.name)
    return int(match.group(1)) if match else 0


def _rank_of(folder: Path, ranks: set[str]) -> int:
    match = _RANK_DIR.fullmatch(folder.name)
    if match:
        return rank_number(match.group(1), folder)
    if folder.name.startswith("proc") and len(ranks) == 1:
        return 0  # a process without torch.distributed
    raise AscendifyError(f"{folder}: neither rank<N> nor the only proc<PID> folder of its step")


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _stats(entry: Any) -> TensorStats | None:
    if not isinstance(entry, dict) or entry.get("type") != "torch.Tensor":
        return None
    low, high, mean, norm = (_number(entry.get(key)) for key in ("Min", "Max", "Mean", "Norm"))
    shape = tuple(int(n) for n in entry.get("shape") or ())
    nonfinite = [v for v in (low, high, mean, norm) if not math.isfinite(v)]
    nan = int(any(math.isnan(v) for v in nonfinite))
    inf = int(any(math.isinf(v) for v in nonfinite))
    dtype = str(entry.get("dtype", "")).removeprefix("torch.")
    requires_grad = entry.get("requires_grad") is True
    return TensorStats(dtype, shape, low, high, mean, norm, nan, inf, None, requires_grad)


def _tensors(values: Iterable[Any]) -> tuple[TensorStats, ...]:
    found = []
    for value in values:
        stats = _stats(value)
        if stats is not None:
            found.append(stats)
    return tuple(found)


def _module_path(name: str | None) -> str:
    match = _MODULE.fullmatch(name or "")
    return match.group("path") if match else ""


def _records(step: int, rank: int, folder: Path) -> list[Record]:
    document = read_json(folder / DUMP_JSON, "msprobe dump")
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, dict):
        raise AscendifyError(f"{folder / DUMP_JSON}: no 'data' object; is it msprobe's dump.json?")
    construct_path = folder / CONSTRUCT_JSON
    parents = read_json(construct_path, "msprobe construct") if construct_path.is_file() else {}
    parents = parents if isinstance(parents, dict) else {}
    forward = [(name, entry) for name, entry in data.items() if ".forward" in name]
    # Calls are written as they end: a call's start is just before the first call nested in it.
    order = {name: 2 * index + 2 for index, (name, _) in enumerate(forward)}
    start = _starts(order, parents, construct_path)
    records = []
    for name, entry in forward:
        if not isinstance(entry, dict):
            continue
        inputs = _tensors(
            [*entry.get("input_args", []), *dict(entry.get("input_kwargs") or {}).values()]
        )
        outputs = _tensors(entry.get("output") or [])
        module = _MODULE.fullmatch(name)
        if module:
            kind, path, call, cls = (
                FORWARD,
                module.group("path"),
                int(module.group("n")),
                module.group("cls"),
            )
        else:
            operator = _OPERATOR.fullmatch(name)
            if operator is None:
                continue
            ours = _our_operator(operator.group("kind"), operator.group("name"))
            kind, path, cls = API, f"{_module_path(parents.get(name))}:{ours}", ""
            call = 0  # counted per module and operator below, as ascendify's records are
        records.append(
            Record(rank, step, kind, path, call, 0, start[name], order[name], inputs, outputs, cls)
        )
    return _renumber_operators(records)


def _starts(order: dict[str, int], parents: dict[str, Any], construct: Path) -> dict[str, int]:
    """Each call's start: its own order, or just before the earliest start of a call nested in
    it; the deepest calls first, so each link is followed once."""
    parent_of = {
        name: parent
        for name in order
        if isinstance(parent := parents.get(name), str) and parent in order
    }
    depth = _depths(parent_of, construct)
    start = dict(order)
    for name in sorted(parent_of, key=depth.__getitem__, reverse=True):
        parent = parent_of[name]
        start[parent] = min(start[parent], start[name] - 1)
    return start


def _depths(parent_of: dict[str, str], construct: Path) -> dict[str, int]:
    """How many parent links lead from each call to a call without a parent; a cycle is an error."""
    depth: dict[str, int] = {}
    for name in parent_of:
        chain: list[str] = []
        on_chain: set[str] = set()
        call: str | None = name
        while call is not None and call not in depth:
            if call in on_chain:
                raise AscendifyError(
                    f"{construct}: the parent links of {call} form a cycle of "
                    f"{len(chain) - chain.index(call)} call(s); is it msprobe's construct.json?"
                )
            chain.append(call)
            on_chain.add(call)
            call = parent_of.get(call)
        below = -1 if call is None else depth[call]
        for link in reversed(chain):
            below += 1
            depth[link] = below
    return depth


def _our_operator(kind: str, name: str) -> str:
    for ours, theirs in _PREFIXES:
        if theirs == f"{kind}.":
            return ours + name
    return f"{kind}.{name}"


def _renumber_operators(records: list[Record]) -> list[Record]:
    calls: Counter[str] = Counter()
    renumbered = []
    for record in sorted(records, key=lambda r: r.start):
        if record.kind == API:
            renumbered.append(replace(record, call=calls[record.path]))
            calls[record.path] += 1
        else:
            renumbered.append(record)
    return renumbered


def read_msprobe(directory: Path) -> Dump:
    """A msprobe dump (its root, a step folder or a rank folder) as a compare dump."""
    folders = list(_rank_folders(directory))
    if not folders:
        raise AscendifyError(f"{directory}: no dump.json of msprobe below it")
    names_per_step: dict[int, set[str]] = defaultdict(set)
    for step, folder in folders:
        names_per_step[step].add(folder.name)
    records: list[Record] = []
    ranks: set[int] = set()
    for step, folder in folders:
        rank = _rank_of(folder, names_per_step[step])
        ranks.add(rank)
        try:
            records.extend(_records(step, rank, folder))
        except (ValueError, TypeError, AttributeError) as error:
            raise AscendifyError(f"{folder / DUMP_JSON}: not a msprobe dump ({error})") from None
    manifest = {"format": "msprobe", "ranks": {str(rank): {} for rank in sorted(ranks)}}
    return Dump(directory, manifest, tuple(records))
