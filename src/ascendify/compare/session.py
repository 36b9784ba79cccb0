"""The effects of ``ascendify compare``: run a program under the recorder, load two dumps and judge them."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascendify._autostart import child_environment
from ascendify.compare._startup import write_sitecustomize
from ascendify.compare.judge import Comparison, judge, measure_stats
from ascendify.compare.metrics import TOLERANCES, PairMetrics, sample_metrics, stat_metrics
from ascendify.compare.msprobe import is_msprobe_dump, read_msprobe, write_msprobe
from ascendify.compare.records import (
    MANIFEST,
    MAX_RANK,
    NAN_CHECK,
    Dump,
    Record,
    TensorStats,
    load_dump,
    read_header,
)
from ascendify.compare.settings import DUMP_VARIABLE, DumpSettings
from ascendify.errors import AscendifyError
from ascendify.textfile import read_json

if TYPE_CHECKING:
    import numpy

_RANK_FILE = re.compile(r"rank(0|[1-9][0-9]{0,6})\.jsonl")


@dataclass(frozen=True)
class DumpOutcome:
    directory: Path
    exit_code: int
    records: dict[int, int]  # records per rank
    foreign: tuple[Path, ...] = ()  # files named like rank files that the recorder did not write
    nan_check: dict[str, Any] | None = None  # --nan-check: the first NaN or inf found


FORMATS = ("ascendify", "msprobe")


def dump_program(
    command: Sequence[str], out: Path, settings: DumpSettings, output_format: str = "ascendify"
) -> DumpOutcome:
    """Run ``command`` unchanged with the recorder armed in each of its Python processes; with
    ``output_format`` msprobe, also write msprobe's layout of the records beside them."""
    if output_format not in FORMATS:
        raise AscendifyError(f"--format {output_format!r}: one of {', '.join(FORMATS)}")
    if not command:
        raise AscendifyError("nothing to run: give the command after '--', e.g. -- python train.py")
    settings.check()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AscendifyError(
            f"{out}: exists and is not an empty folder; give a new one for the dump"
        )
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    settings.write(out)
    try:
        returncode = _run_recorded(command, out)
    except AscendifyError:
        # Nothing ran: leave no half-made dump behind (an empty folder the user gave stays).
        for path in out.iterdir():
            path.unlink()
        if created:
            out.rmdir()
        raise
    headers, records, foreign = _rank_files(out)
    nan_check = read_nan_check(out)
    manifest = {
        "command": list(command),
        "settings": asdict(settings),
        "exit_code": returncode,
        "ranks": headers,
        "nan_check": nan_check,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    if output_format == "msprobe" and headers:
        write_msprobe(load_dump(out), out)
    return DumpOutcome(out, returncode, records, foreign, nan_check)


def read_nan_check(out: Path) -> dict[str, Any] | None:
    """What ``--nan-check`` found first in a dump folder, or None."""
    path = out / NAN_CHECK
    if not path.is_file():
        return None
    try:
        found = read_json(path, "NaN check")
    except (AscendifyError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _run_recorded(command: Sequence[str], out: Path) -> int:
    with recorder_environment(out) as env:
        try:
            return subprocess.run(list(command), env=env, check=False).returncode
        except OSError as error:  # no such program, not executable
            raise AscendifyError(f"cannot run {command[0]!r}: {error.strerror}") from None


@contextmanager
def recorder_environment(out: Path) -> Iterator[dict[str, str]]:
    """An environment in which every Python process arms the recorder of the settings written in
    ``out`` right after its ``import torch``; for the block's duration."""
    with tempfile.TemporaryDirectory(prefix="ascendify-compare-") as startup:
        write_sitecustomize(Path(startup))
        env = child_environment([Path(startup)])
        env[DUMP_VARIABLE] = str(out.resolve())
        yield env


@contextmanager
def nan_sentinel(folder: Path) -> Iterator[dict[str, str]]:
    """The environment of ``ascendify run --nan-check``: every rank checks each operator's output
    for NaN and inf and records nothing; what the first finds lands in ``folder``."""
    DumpSettings(record=False, nan_check=True).check().write(folder)
    with recorder_environment(folder) as env:
        yield env


def _rank_files(out: Path) -> tuple[dict[str, Any], dict[int, int], tuple[Path, ...]]:
    """The headers and record counts of the rank files the recorder wrote, and the files of the
    program's own whose names look like rank files: those are left out of the manifest, so the
    dump stays readable."""
    headers: dict[str, Any] = {}
    records: dict[int, int] = {}
    foreign: list[Path] = []
    for path in sorted(out.iterdir()):
        match = _RANK_FILE.fullmatch(path.name)
        if not match:
            continue
        header = read_header(path) if int(match.group(1)) < MAX_RANK else None
        if header is None:
            foreign.append(path)
            continue
        rank = int(match.group(1))
        headers[str(rank)] = header
        with path.open("rb") as lines:
            records[rank] = sum(1 for _ in lines) - 1
    return headers, records, tuple(foreign)


class _Samples:
    """The sampled tensors of two dumps (``--level tensors``), read once per rank file."""

    def __init__(self, a: Dump, b: Dump) -> None:
        self.dumps = (a, b)
        self.arrays: dict[tuple[int, int], numpy.ndarray] = {}

    def _array(self, side: int, rank: int, where: tuple[int, int]) -> numpy.ndarray:
        import numpy

        array = self.arrays.get((side, rank))
        if array is None:
            path = self.dumps[side].tensors_path(rank)
            if not path.is_file():
                raise AscendifyError(f"{path}: missing (its records name samples in it)")
            array = self.arrays[(side, rank)] = numpy.fromfile(path, dtype="<f4")
        offset, count = where
        return array[offset // 4 : offset // 4 + count]

    def measure(self, a: Record, x: TensorStats, b: Record, y: TensorStats) -> PairMetrics:
        base = stat_metrics(x, y)
        if x.sample is None or y.sample is None or base.shape_differs:
            return base
        return sample_metrics(
            base, self._array(0, a.rank, x.sample), self._array(1, b.rank, y.sample)
        )


def read_dump(directory: Path) -> Dump:
    """An ascendify dump, or msprobe's (its root, a step folder or a rank folder)."""
    if not (directory / MANIFEST).is_file() and directory.is_dir() and is_msprobe_dump(directory):
        return read_msprobe(directory)
    return load_dump(directory)


def _has_samples(dump: Dump) -> bool:
    return any(dump.tensors_path(rank).is_file() for rank in dump.ranks)


def compare_dumps(a: Path, b: Path, tolerance: str) -> Comparison:
    if tolerance not in TOLERANCES:
        raise AscendifyError(f"--tolerance {tolerance!r}: one of {', '.join(TOLERANCES)}")
    dump_a, dump_b = read_dump(a), read_dump(b)
    measure = measure_stats
    if _has_samples(dump_a) and _has_samples(dump_b):
        try:
            import numpy  # noqa: F401
        except ImportError:
            raise AscendifyError(
                "comparing sampled tensors needs numpy: pip install numpy"
            ) from None
        measure = _Samples(dump_a, dump_b).measure
    chosen, notes = autocast_tolerance(dump_a, dump_b, tolerance)
    comparison = judge(dump_a.records, dump_b.records, chosen, measure)
    return replace(comparison, notes=notes, runs=(_described(dump_a), _described(dump_b)))


def _described(dump: Dump) -> str:
    """A dump as a report names it: its folder, and the command it recorded when it has one."""
    command = dump.manifest.get("command")
    if isinstance(command, list) and command:
        return f"{dump.directory}: {shlex.join(str(word) for word in command)}"
    if dump.manifest.get("format") == "msprobe":
        return f"{dump.directory} (a msprobe dump)"
    return str(dump.directory)


_FORMAT_OF = {"float16": "fp16", "bfloat16": "bf16"}  # from tighter to looser


def autocast_tolerance(a: Dump, b: Dump, tolerance: str) -> tuple[str, tuple[str, ...]]:
    """The tolerance to judge with, and why. A run under autocast carries its format's error into
    fp32 tensors too (a residual sum, a LayerNorm autocast runs in fp32), which a per-dtype budget
    does not allow for: ``auto`` judges the two runs with that format's budget, ``strict`` says so."""
    used = {
        (side, header.get("autocast"))
        for side, dump in (("A", a), ("B", b))
        for header in dump.manifest["ranks"].values()
        if header.get("autocast") in _FORMAT_OF
    }
    if not used or tolerance not in ("auto", "strict"):
        return tolerance, ()
    runs = ", ".join(f"{side} ran under {dtype} autocast" for side, dtype in sorted(used))
    loosest = _FORMAT_OF[max((dtype for _, dtype in used), key=list(_FORMAT_OF).index)]
    if tolerance == "strict":
        return tolerance, (f"note: {runs}; --tolerance {loosest} allows for its rounding",)
    return loosest, (
        f"note: {runs}: judged with {loosest}'s budget (--tolerance strict refuses it)",
    )
