"""How jobs are shown: the ``job list`` table, the ``job describe`` text and the ``job top``
frame. Pure formatting."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import Point, Progress
from ascendify.jobs.spec import shown_spec
from ascendify.jobs.store import Event, JobRecord, NodeRecord
from ascendify.moments import iso_time

LIST_HEADER = (
    "ID", "NAME", "ENGINE", "NODES x CARDS", "STATE", "STEP", "LOSS", "THROUGHPUT", "FLAVOR",
    "START", "DURATION", "CAUSE", "ATTEMPTS", "EXIT",
)  # fmt: skip
CAUSE_WIDTH = 48


def state_text(job: JobRecord) -> str:
    """``failed (runner lost)``: the cause is shown where it is not a rank's failure."""
    return f"{job.state} ({job.cause})" if job.cause == "runner lost" else job.state


def _when(stamp: float | None) -> str:
    return iso_time(stamp) if stamp else "-"


def _flavor(job: JobRecord) -> str:
    flavor = job.spec.get("flavor")
    return f"flavor {flavor}, " if flavor else ""


def _duration(job: JobRecord, now: float) -> str:
    if job.started is None:
        return "-"
    seconds = int((job.ended or now) - job.started)
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def list_table(
    jobs: Sequence[JobRecord],
    progress: Mapping[str, Progress],
    causes: Mapping[str, str | None] | None = None,
) -> str:
    """The jobs, one a row, with each one's ``progress`` (last step, loss, throughput) and, for a
    failed job, the cause its logs name (``causes``, by job id)."""
    causes = causes or {}
    now = time.time()
    rows = [LIST_HEADER] + [
        (
            job.id,
            job.name,
            job.engine,
            f"{job.nodes} x {job.cards}",
            state_text(job),
            *_progress_cells(progress.get(job.id)),
            job.spec.get("flavor") or "-",
            _when(job.started),
            _duration(job, now),
            _cause_cell(causes.get(job.id)),
            str(job.attempts),
            "-" if job.exit_code is None else str(job.exit_code),
        )
        for job in jobs
    ]
    widths = [max(map(len, column)) for column in zip(*rows, strict=True)]
    line = "  ".join(f"{{:<{width}}}" for width in widths[:-1]) + "  {}"
    return "\n".join(line.format(*row) for row in rows)


def _cause_cell(text: str | None) -> str:
    if not text:
        return "-"
    return text if len(text) <= CAUSE_WIDTH else text[: CAUSE_WIDTH - 3] + "..."


def _progress_cells(progress: Progress | None) -> tuple[str, str, str]:
    if progress is None:
        return "-", "-", "-"
    rate = progress.throughput
    return (
        "-" if progress.step is None else str(progress.step),
        "-" if progress.loss is None else f"{progress.loss:.4g}",
        "-" if rate is None else f"{rate[1]:.4g} {rate[0]}",
    )


def describe(
    job: JobRecord,
    events: Sequence[Event],
    nodes: Sequence[NodeRecord],
    layout: JobLayout,
    why: str | None = None,
) -> str:
    """``why``: the verdict of ``ascendify explain`` on the job's logs, when it failed."""
    lines = [
        f"job {job.id} ({job.name}): {state_text(job)}",
        f"engine {job.engine}, {_flavor(job)}{job.nodes} node(s) x {job.cards} card(s)",
        f"started {_when(job.started)}, ended {_when(job.ended)}, "
        f"exit code {'-' if job.exit_code is None else job.exit_code}",
    ]
    if job.rerun_of:
        lines.append(f"rerun of {job.rerun_of}")
    if job.cause:
        lines.append(f"cause: {job.cause}")
    lines += ["", "state history:"]
    lines += [f"  {_when(e.time)}  {e.state}{'  ' + e.detail if e.detail else ''}" for e in events]
    lines += ["", "nodes:"]
    summaries = {node.node: layout.summary(node.node) for node in nodes}
    for node in nodes:
        summary = summaries[node.node] or {}
        codes = ", ".join(f"rank {r}: {c}" for r, c in summary.get("exit_codes", {}).items())
        lines.append(
            f"  node {node.node} ({node.address}): exit code "
            f"{'-' if node.exit_code is None else node.exit_code}" + (f"; {codes}" if codes else "")
        )
    attempts = layout.attempts(job.nodes)
    if attempts:
        lines += ["", "attempts:"]
        for attempt in attempts:
            lines += _attempt_lines(attempt)
    root = layout.root_cause(job.nodes)
    if root is not None:
        lines += ["", "root cause:", *_root_cause_lines(root)]
    if why:
        lines += ["", "why (from every rank's logs):", *(f"  {line}" for line in why.splitlines())]
    lines += ["", f"logs: {layout.logs}", "", "spec:", json.dumps(shown_spec(job.spec), indent=2)]
    return "\n".join(lines)


def _attempt_lines(attempt: dict[str, Any]) -> list[str]:
    """One attempt: when, how it ended and why, each rank's exit code, the stacks of a hang."""
    ended = attempt["state"] + (f" ({attempt['cause']})" if attempt["cause"] else "")
    lines = [
        f"  attempt {attempt['attempt']}: {_when(attempt['start'])} - {_when(attempt['end'])}, "
        f"{ended}" + (f": {attempt['reason']}" if attempt["reason"] else ""),
        "    exit codes: "
        + ", ".join(f"rank {rank}: {code}" for rank, code in attempt["exit_codes"].items()),
    ]
    membership = membership_note(attempt)
    if membership:
        lines.append(f"    {membership}")
    for rank, stack in sorted(attempt["stacks"].items(), key=lambda item: int(item[0])):
        lines.append(f"    stack of rank {rank}:")
        lines += [f"      {line}" for line in stack.splitlines()]
    return lines


def membership_note(attempt: dict[str, Any]) -> str:
    """The nodes an attempt of a multi-node job ran on, who left or joined when they met, and
    which node held the rendezvous store ("" for one node)."""
    membership = attempt.get("membership")
    if not membership:
        return ""
    members = ", ".join(map(str, membership["members"]))
    changes = [
        f"node(s) {', '.join(map(str, membership[key]))} {key} at {_when(membership['time'])}"
        for key in ("left", "joined")
        if membership[key]
    ]
    note = f"nodes {members} (store on node {membership['host']})"
    return note + (f"; {'; '.join(changes)}" if changes else "")


def membership_change(attempt: dict[str, Any]) -> str:
    """The nodes that left or joined the job when an attempt's nodes met ("node 1 left, node 2
    joined"; "" when none did): what the job page writes at the attempt's restart mark."""
    membership = attempt.get("membership") or {}
    return ", ".join(
        f"node{'s' if len(nodes) > 1 else ''} {', '.join(map(str, nodes))} {key}"
        for key in ("left", "joined")
        if (nodes := membership.get(key))
    )


def _root_cause_lines(root: dict[str, Any]) -> list[str]:
    if root["rank"] < 0:
        return [f"  node {root['node_rank']}: {root.get('error')}"]
    lines = [
        f"  node {root['node_rank']}, rank {root['rank']} (local rank {root['local_rank']}, "
        f"device {root['device_id']}): exit code {root['exit_code']}",
    ]
    if root.get("error"):
        lines.append(f"  error: {root['error']}")
    lines.append(f"  log: {root['log_path']}")
    lines += [f"    {line}" for line in root.get("last_lines", ())]
    return lines


def top_frame(job: JobRecord, samples: Sequence[Point]) -> str:
    """``job top``: the job's last resource sample (see :mod:`ascendify.jobs.resources`), a row
    per node's process tree and per rank's below it, then the host and the accelerators."""
    head = (
        f"job {job.id} ({job.name}): {state_text(job)}, {_flavor(job)}{job.nodes} node(s) x "
        f"{job.cards} card(s)"
    )
    if not samples:
        return f"{head}\nno resource samples yet (the runner takes one every few seconds)"
    last = max(point.time for point in samples)
    now = {(p.rank, p.name): p.value for p in samples if p.time == last}
    rows = [("NODE", "RANK", "CPU %", "PSS MiB")]
    for node in range(job.nodes):
        if (-1, f"node{node}/cpu") in now:
            rows.append(
                (
                    str(node),
                    "all",
                    _cell(now, -1, f"node{node}/cpu"),
                    _memory_cell(now, -1, f"node{node}/"),
                )
            )
        for rank in range(node * job.cards, (node + 1) * job.cards):
            if (rank, "cpu") in now:
                rows.append(
                    (str(node), str(rank), _cell(now, rank, "cpu"), _memory_cell(now, rank, ""))
                )
    width = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = [head, f"sampled {iso_time(last)}", ""]
    lines += ["  ".join(cell.rjust(width[i]) for i, cell in enumerate(row)) for row in rows]
    lines += [
        "",
        f"host: CPU {_cell(now, -1, 'host/cpu')} % of all cores, memory used {_cell(now, -1, 'host/mem')} MiB",
    ]
    devices = sorted({name.split("/")[0] for rank, name in now if name[:3] in ("gpu", "npu")})
    for device in devices:
        memory = (
            f"{_cell(now, -1, device + '/mem')} MiB"
            if (-1, device + "/mem") in now
            else f"{_cell(now, -1, device + '/mem%')} % of HBM"
        )
        lines.append(f"{device}: utilisation {_cell(now, -1, device + '/util')} %, memory {memory}")
    return "\n".join(lines)


def _memory_cell(now: Mapping[tuple[int, str], float], rank: int, prefix: str) -> str:
    """A process tree's PSS; the resident size (``mem``) that jobs sampled before PSS recorded."""
    name = f"{prefix}pss" if (rank, f"{prefix}pss") in now else f"{prefix}mem"
    return _cell(now, rank, name)


def _cell(now: Mapping[tuple[int, str], float], rank: int, name: str) -> str:
    value = now.get((rank, name))
    return "-" if value is None else f"{value:,.1f}"
