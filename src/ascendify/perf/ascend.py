"""Ascend's profiler output: a rank's ``*_ascend_pt`` folder and msprof-analyze's cluster folder.

``ASCEND_PROFILER_OUTPUT/step_trace_time.csv`` already holds the step split (µs): its 9-, 10- and
11-column headers are read by name. Without it, the ``Computing`` and ``Communication`` ranges
of ``trace_view.json`` (whose ``ts`` may be strings) are split the same way kineto traces are.
``communication.json`` gives each rank's traffic per transport, ``communication_matrix.json``
(and the cluster's ``cluster_communication_matrix.json``) the traffic per link; ``kernel_details.csv``
the operators. msprof-analyze's ``cluster_step_trace_time.csv`` gives every rank's rows at once.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ascendify.perf.intervals import Timeline, split_step
from ascendify.perf.kineto import STEP_NAME, number
from ascendify.perf.model import Link, RankProfile, StepSplit, Totals, UnusableTrace
from ascendify.perf.stream import TraceReader

OUTPUT = "ASCEND_PROFILER_OUTPUT"
STEP_TRACE = "step_trace_time.csv"
CLUSTER_OUTPUT = "cluster_analysis_output"
CLUSTER_STEP_TRACE = "cluster_step_trace_time.csv"
MAX_JSON_BYTES = 256 << 20  # communication files: a summary per operator, far below this
# Preparing is a duration; msprof-analyze has been seen writing an absolute time stamp there.
MAX_PREPARING_US = 3.6e9
_RANK_IN_NAME = re.compile(r"(?:^|_)rank_?(\d+)(?:_|$)")
_PROFILER_INFO = re.compile(r"profiler_info_(\d+)\.json")
_LINK = re.compile(r"(\d+)-(\d+)")
_NOT_OVERLAPPED = "Communication(Not Overlapped)"


def is_ascend_folder(path: Path) -> bool:
    return path.is_dir() and (path.name.endswith("_ascend_pt") or (path / OUTPUT).is_dir())


def is_cluster_folder(path: Path) -> bool:
    return path.is_dir() and (path / CLUSTER_STEP_TRACE).is_file()


def ascend_rank(folder: Path) -> int | None:
    """The rank a ``*_ascend_pt`` folder belongs to: ``profiler_info_<rank>.json``, else a
    ``rank<r>`` in its name or its parent's (``profile/rank_<r>/``)."""
    for child in folder.iterdir():
        found = _PROFILER_INFO.fullmatch(child.name)
        if found:
            return int(found.group(1))
    for name in (folder.name, folder.parent.name):
        found = _RANK_IN_NAME.search(name)
        if found:
            return int(found.group(1))
    return None


def read_ascend(folder: Path, rank: int | None = None) -> RankProfile:
    rank = ascend_rank(folder) if rank is None else rank
    if rank is None:
        raise UnusableTrace(
            f"{folder}: cannot tell its rank (no profiler_info_<rank>.json, no rank<r> in its name)"
        )
    output = folder / OUTPUT
    notes: list[str] = []
    if (output / STEP_TRACE).is_file():
        steps = _steps_from_rows(_csv_rows(output / STEP_TRACE), notes, output / STEP_TRACE)
        timeline = f"device ({STEP_TRACE})"
    elif (output / "trace_view.json").is_file():
        steps = _steps_from_trace_view(output / "trace_view.json")
        timeline = "device (trace_view.json)"
    else:
        raise UnusableTrace(f"{folder}: no {OUTPUT}/{STEP_TRACE} nor trace_view.json")
    if not steps:
        raise UnusableTrace(f"{folder}: 0 steps in its step trace")
    links = _rank_links(rank, output / "communication.json") + _matrix_links(
        output / "communication_matrix.json"
    )
    return RankProfile(
        rank=rank,
        source=folder,
        format="ascend",
        steps=steps,
        timeline=timeline,
        links=links,
        operators=_kernel_totals(output / "kernel_details.csv"),
        notes=tuple(notes),
    )


def read_cluster(folder: Path) -> list[RankProfile]:
    """Every rank of msprof-analyze's ``cluster_analysis_output``."""
    by_rank: dict[int, list[Mapping[str, str]]] = {}
    for row in _csv_rows(folder / CLUSTER_STEP_TRACE):
        if row.get("Type", "rank").strip().lower() == "rank" and row.get("Index", "").isdigit():
            by_rank.setdefault(int(row["Index"]), []).append(row)
    links = _matrix_links(folder / "cluster_communication_matrix.json")
    profiles = []
    for rank, rows in sorted(by_rank.items()):
        notes: list[str] = []
        steps = _steps_from_rows(rows, notes, folder / CLUSTER_STEP_TRACE)
        profiles.append(
            RankProfile(
                rank=rank,
                source=folder / CLUSTER_STEP_TRACE,
                format="cluster",
                steps=steps,
                timeline=f"device ({CLUSTER_STEP_TRACE})",
                links=tuple(link for link in links if link.source == rank),
                notes=tuple(notes),
            )
        )
    return profiles


# -- step_trace_time.csv ------------------------------------------------------------------------


def _csv_rows(path: Path) -> Iterator[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            yield {(key or "").strip(): (value or "").strip() for key, value in row.items()}


def _steps_from_rows(
    rows: Iterator[dict[str, str]] | list[Mapping[str, str]], notes: list[str], path: Path
) -> tuple[StepSplit, ...]:
    steps: list[StepSplit] = []
    device: str | None = None
    for index, row in enumerate(rows):
        if "Computing" not in row or _NOT_OVERLAPPED not in row:
            raise UnusableTrace(f"{path}: no Computing / {_NOT_OVERLAPPED} columns")
        device = row.get("Device_id") if device is None else device
        if row.get("Device_id") not in (None, device):
            notes.append(
                f"{path.name}: rows of device {row['Device_id']} left out (rank has {device})"
            )
            continue
        steps.append(_step_row(row, index, notes, path))
    return tuple(sorted(steps, key=lambda split: split.step))


def _step_row(row: Mapping[str, str], index: int, notes: list[str], path: Path) -> StepSplit:
    def value(column: str) -> float:
        text = row.get(column, "")
        try:
            return float(text) if text not in ("", "NA", "N/A") else 0.0
        except ValueError:
            raise UnusableTrace(f"{path}: {column} {text!r} is not a number") from None

    computing, not_overlapped, free = value("Computing"), value(_NOT_OVERLAPPED), value("Free")
    overlapped = (
        value("Overlapped") if "Overlapped" in row else value("Communication") - not_overlapped
    )
    preparing = value("Preparing")
    if not 0 <= preparing <= MAX_PREPARING_US:
        notes.append(
            f"{path.name}: Preparing {preparing:.0f} is a time stamp, not a duration: left out"
        )
        preparing = 0.0
    digits = re.sub(r"\D", "", row.get("Step", ""))
    window = computing + not_overlapped + free
    stage, bubble = value("Stage"), value("Bubble")
    if stage > 0 and abs(stage + bubble - window) > 0.01 * window:
        notes.append(
            f"{path.name}: step {digits or index}: Stage + Bubble ({stage + bubble:.0f}) is not "
            f"Computing + Communication(Not Overlapped) + Free ({window:.0f})"
        )
    return StepSplit(
        step=int(digits) if digits else index,
        step_ms=(window + preparing) / 1000,
        computing_ms=computing / 1000,
        communication_not_overlapped_ms=not_overlapped / 1000,
        overlapped_ms=overlapped / 1000,
        free_ms=free / 1000,
        preparing_ms=preparing / 1000,
    )


# -- trace_view.json ----------------------------------------------------------------------------


def _steps_from_trace_view(path: Path) -> tuple[StepSplit, ...]:
    computing, communication = Timeline(), Timeline()
    steps: dict[int, tuple[float, float]] = {}
    for event in TraceReader(path).events():
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        name, start, duration = event.get("name"), number(event.get("ts")), number(event.get("dur"))
        if not isinstance(name, str) or start is None or duration is None:
            continue
        if name == "Computing":
            computing.add(start, start + duration)
        elif name == "Communication":
            communication.add(start, start + duration)
        elif (step := STEP_NAME.fullmatch(name)) is not None:
            steps.setdefault(int(step.group(1)), (start, start + duration))
    busy, talking = computing.merged(), communication.merged()
    return tuple(
        StepSplit.from_split(index, split_step(busy, talking, start, end))
        for index, (start, end) in sorted(steps.items())
    )


# -- communication ------------------------------------------------------------------------------


def _load_json(path: Path) -> Any:
    if not path.is_file():
        return None
    if path.stat().st_size > MAX_JSON_BYTES:
        raise UnusableTrace(f"{path}: larger than {MAX_JSON_BYTES >> 20} MiB")
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise UnusableTrace(f"{path}: not JSON ({error})") from None


def _walk(document: Any) -> Iterator[tuple[str, Any]]:
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                yield str(key), value
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)


def _rank_links(rank: int, path: Path) -> tuple[Link, ...]:
    """Per transport, the rank's traffic from ``communication.json``'s bandwidth tables."""
    totals: dict[str, list[float]] = {}
    for key, value in _walk(_load_json(path)):
        if key != "Communication Bandwidth Info" or not isinstance(value, dict):
            continue
        for transport, figures in value.items():
            size, time = _traffic(figures)
            if time > 0:
                total = totals.setdefault(str(transport), [0.0, 0.0])
                total[0] += size
                total[1] += time
    return tuple(
        Link(rank, None, transport, size, time) for transport, (size, time) in totals.items()
    )


def _matrix_links(path: Path) -> tuple[Link, ...]:
    """Per pair of ranks and transport, the traffic of a communication matrix."""
    totals: dict[tuple[int, int, str], list[float]] = {}
    for key, value in _walk(_load_json(path)):
        pair = _LINK.fullmatch(key)
        if pair is None or not isinstance(value, dict):
            continue
        size, time = _traffic(value)
        source, destination = int(pair.group(1)), int(pair.group(2))
        if time > 0 and source != destination:
            transport = str(value.get("Transport Type", "?"))
            total = totals.setdefault((source, destination, transport), [0.0, 0.0])
            total[0] += size
            total[1] += time
    return tuple(Link(s, d, t, size, time) for (s, d, t), (size, time) in sorted(totals.items()))


def _traffic(figures: Any) -> tuple[float, float]:
    if not isinstance(figures, dict):
        return 0.0, 0.0
    size, time = number(figures.get("Transit Size(MB)")), number(figures.get("Transit Time(ms)"))
    return (size or 0.0), (time or 0.0)


def _kernel_totals(path: Path) -> Totals:
    totals = Totals()
    if not path.is_file():
        return totals
    for row in _csv_rows(path):
        duration = number(row.get("Duration(us)"))
        name = row.get("Type") or row.get("Name")
        if name and duration is not None:
            totals.add(name, duration)
    return totals
