"""A dump on disk, as records: what ``compare dump`` writes and ``compare`` reads (no torch needed).

A dump is a folder::

    manifest.json          the command, the settings, its exit code, and each rank's header
    settings.json          what the recorder in the program's processes is asked to record
    rank0.jsonl            rank 0's records, one JSON object a line, after one header line
    rank0.tensors          with --level tensors: the sampled tensors, float32 little-endian

A record is one module call (``fwd``), one torch operator call inside it (``api``, with
``--level api``: torch functions, tensor methods, ``torch.nn.functional``), the gradient of one of its outputs (``grad``), one
parameter's gradient (``param_grad``), a loss (``loss``: the tensor ``backward()`` was called on) or
the gradient norm at an optimizer step (``grad_norm``). Each tensor of a record is a row
``[dtype, shape, min, max, mean, norm, nan, inf]``, followed by ``[offset, count]`` of its sample
in the tensors file when one was written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.textfile import read_json

MANIFEST = "manifest.json"
SETTINGS = "settings.json"
FORWARD = "fwd"
API = "api"  # one torch operator call (--level api): its path is "<module path>:<operator>"
KINDS = (FORWARD, API, "grad", "param_grad", "loss", "grad_norm")
NAN_CHECK = "nan_check.json"  # --nan-check: the first operator that produced a NaN or inf
# Ranks are small numbers: a manifest naming rank 10**30 is not a dump of a real job.
MAX_RANK = 2**20
_RANK_NAME = re.compile(r"0|[1-9][0-9]{0,6}")
# A record's identity in both dumps; call counts may differ, so the call index is part of it.
Key = tuple[int, int, str, str, int, int]  # rank, step, kind, path, call, slot


def rank_file(rank: int) -> str:
    return f"rank{rank}.jsonl"


def tensors_file(rank: int) -> str:
    return f"rank{rank}.tensors"


@dataclass(frozen=True)
class TensorStats:
    dtype: str
    shape: tuple[int, ...]
    min: float
    max: float
    mean: float
    norm: float
    nan: int
    inf: int
    sample: tuple[int, int] | None = None  # offset and element count in the rank's tensors file
    requires_grad: bool = False

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def rms(self) -> float:
        return self.norm / math.sqrt(self.numel) if self.numel else 0.0


@dataclass(frozen=True)
class Record:
    rank: int
    step: int
    kind: str
    path: str
    call: int
    slot: int  # which output a gradient belongs to; 0 otherwise
    start: int  # the step's event counter when the call began
    order: int  # ... and when it ended: records nested in this one began after it and ended before
    inputs: tuple[TensorStats, ...]
    outputs: tuple[TensorStats, ...]
    module_class: str = ""  # a module call's class name, when the recorder knew it

    @property
    def key(self) -> Key:
        return (self.rank, self.step, self.kind, self.path, self.call, self.slot)

    def encloses(self, other: Record) -> bool:
        return self.start < other.start and other.order < self.order


@dataclass(frozen=True)
class Dump:
    directory: Path
    manifest: dict[str, Any]
    records: tuple[Record, ...]

    @property
    def ranks(self) -> list[int]:
        return sorted(int(rank) for rank in self.manifest.get("ranks", {}))

    def tensors_path(self, rank: int) -> Path:
        return self.directory / tensors_file(rank)


def tensor_row(stats: TensorStats) -> list[Any]:
    row: list[Any] = [stats.dtype, list(stats.shape), stats.min, stats.max, stats.mean]
    row += [stats.norm, stats.nan, stats.inf]
    return row if stats.sample is None else [*row, *stats.sample]


def record_line(record: Record) -> str:
    document = {
        "s": record.step, "k": record.kind, "p": record.path, "c": record.call, "x": record.slot,
        "b": record.start, "o": record.order,
        "in": [tensor_row(t) for t in record.inputs],
        "out": [tensor_row(t) for t in record.outputs],
    }  # fmt: skip
    if record.module_class:
        document["t"] = record.module_class
    tensors = (*record.inputs, *record.outputs)
    if any(t.requires_grad for t in tensors):  # one digit a tensor, inputs then outputs
        document["g"] = "".join("1" if t.requires_grad else "0" for t in tensors)
    return json.dumps(document, separators=(",", ":")) + "\n"


def _tensor(row: list[Any]) -> TensorStats:
    dtype, shape, low, high, mean, norm, nan, inf, *sample = row
    return TensorStats(
        str(dtype), tuple(map(int, shape)), float(low), float(high), float(mean),
        float(norm), int(nan), int(inf), (int(sample[0]), int(sample[1])) if sample else None,
    )  # fmt: skip


def _record(rank: int, document: dict[str, Any]) -> Record:
    record = Record(
        rank, int(document["s"]), str(document["k"]), str(document["p"]), int(document["c"]),
        int(document.get("x", 0)), int(document["b"]), int(document["o"]),
        tuple(_tensor(row) for row in document["in"]),
        tuple(_tensor(row) for row in document["out"]),
        str(document.get("t", "")),
    )  # fmt: skip
    flags = document.get("g")
    if not isinstance(flags, str):
        return record
    tensors = [
        replace(t, requires_grad=f == "1")
        for t, f in zip((*record.inputs, *record.outputs), flags, strict=False)
    ]
    count = len(record.inputs)
    return replace(record, inputs=tuple(tensors[:count]), outputs=tuple(tensors[count:]))


def read_rank(path: Path, rank: int) -> Iterator[Record]:
    """The records of one rank file (its first line is the header)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if number == 1 or not line.strip():
                continue
            try:
                yield _record(rank, json.loads(line))
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise AscendifyError(f"{path}:{number}: not a dump record ({error})") from None
            except RecursionError:
                raise AscendifyError(
                    f"{path}:{number}: not a dump record (nested too deeply)"
                ) from None


def rank_number(name: object, where: Path) -> int:
    """A rank named by a manifest key or a file name: a small decimal number, else an error."""
    if not isinstance(name, str) or not _RANK_NAME.fullmatch(name) or int(name) >= MAX_RANK:
        raise AscendifyError(f"{where}: {str(name)[:40]!r} is not a rank number")
    return int(name)


def load_dump(directory: Path) -> Dump:
    """A dump folder, checked: its manifest and every rank file it names must be there."""
    manifest_path = directory / MANIFEST
    if not directory.is_dir():
        raise AscendifyError(f"{directory}: no such dump folder")
    if not manifest_path.is_file():
        raise AscendifyError(f"{manifest_path}: missing; is {directory} a compare dump?")
    try:
        manifest = read_json(manifest_path, "dump manifest")
    except ValueError as error:
        raise AscendifyError(f"{manifest_path}: not JSON ({error})") from None
    ranks = manifest.get("ranks") if isinstance(manifest, dict) else None
    if not ranks or not isinstance(ranks, dict):
        raise AscendifyError(f"{manifest_path}: records no rank; did the command run any module?")
    records: list[Record] = []
    for name, header in ranks.items():
        rank = rank_number(name, manifest_path)
        if not isinstance(header, dict):
            raise AscendifyError(f"{manifest_path}: rank {rank}'s header is not an object")
        path = directory / rank_file(rank)
        if not path.is_file():
            raise AscendifyError(f"{path}: missing (the manifest lists rank {name})")
        records.extend(read_rank(path, rank))
    return Dump(directory, manifest, tuple(records))


# A header is a few hundred bytes; a longer first line was not written by the recorder.
_MAX_HEADER = 64 * 2**10


def read_header(path: Path) -> dict[str, Any] | None:
    """The header line of a rank file; None when the file is not one the recorder wrote (a program
    may write its own files into the dump folder)."""
    try:
        with path.open(encoding="utf-8") as lines:
            header = json.loads(lines.readline(_MAX_HEADER))["header"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    return header if isinstance(header, dict) else None
