"""Faults injected into a real two-node job, under ascendify and under torchrun, in the same run.

Two loopback "nodes" (one launcher each, 127.0.0.1 and 127.0.0.2, one rank each, gloo) run a toy
loop: one all-reduce per step of STEP_SECONDS, rank 0 saves a checkpoint every SAVE_EVERY steps
(written beside, then renamed) and, on SIGTERM, once more after the step in flight (the
three-line contract of ``ascendify.savenow``). Each rank appends its events (start with the step
it resumed from, each completed step) to one file. At step FAULT_STEP the fault comes:

- ``rank-kill``: rank 1 SIGKILLed;  ``rank-hang``: rank 1 SIGSTOPped;
- ``node-kill``: node 1's whole process tree SIGKILLed (launcher, ranks; node 0 holds the store);
- ``node0-kill``: node 0's whole tree SIGKILLed (the store's host);
- ``torn-save``: rank 0 SIGKILLs itself halfway through writing a checkpoint;
- ``disk-full``: the checkpoint folder (a 1 MiB tmpfs mounted for the run; root needed) is filled
  by another file, and emptied again 3 s later.

Measured per fault: detect (fault -> the first surviving rank process gone: its collective failed
or its launcher stopped it), MTTR (fault -> the first step completed by a rank started after it),
steps lost (the last step completed before the fault minus the step the job resumed from), and
whether the job ended with exit 0 on a surviving node. ascendify runs ``--nnodes 1:2
--max-restarts 3 --hang-timeout 3 --grace-period 5``; torchrun ``--nnodes 1:2 --rdzv-backend c10d
--max-restarts 3`` (its own hang detection: none). Targets: ascendify survives every fault
torchrun survives plus node 0's loss; MTTR >= 4x shorter where both recover; < 20 s after node
0's loss.

    python benchmarks/bench_faults.py [--faults rank-kill,node0-kill] [--window 90]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

SRC = Path(__file__).resolve().parents[1] / "src"
FAULTS = ("rank-kill", "rank-hang", "node-kill", "node0-kill", "torn-save", "disk-full")
STEPS, STEP_SECONDS, SAVE_EVERY, FAULT_STEP = 60, 0.2, 4, 10
LOOP = """\
import json, os, signal, sys, time
from pathlib import Path
import torch, torch.distributed as dist

stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(True))  # save now (ascendify.savenow)
events, ckpts = Path(os.environ["EVENTS"]), Path(os.environ["CKPTS"])
steps, pause, every = int(os.environ["STEPS"]), float(os.environ["STEP_SECONDS"]), int(os.environ["SAVE_EVERY"])

def note(**event):
    with events.open("a") as out:
        out.write(json.dumps({"t": time.time(), "pid": os.getpid(), **event}) + "\\n")

def save(step, value, tear=False):
    data = json.dumps({"step": step, "value": value, "pad": "x" * 65536}).encode()
    part = ckpts / f".ckpt-{step}.part"
    with part.open("wb") as out:
        out.write(data[: len(data) // 2] if tear else data)
        out.flush()
        if tear:
            os.kill(os.getpid(), signal.SIGKILL)
    part.replace(ckpts / f"ckpt-{step}.json")

def latest():
    for path in sorted(ckpts.glob("ckpt-*.json"), key=lambda p: -int(p.stem.split("-")[1])):
        try:
            state = json.loads(path.read_text())
            return state["step"], state["value"]
        except (ValueError, KeyError, OSError):
            continue
    return 0, 0.0

dist.init_process_group("gloo")
dist.barrier()
rank = dist.get_rank()
step, value = latest()
note(event="start", rank=rank, step=step, world=dist.get_world_size())
tear_at = int(os.environ.get("TEAR_AT", "0"))
while step < steps:
    total = torch.tensor([1.0])
    dist.all_reduce(total)
    step, value = step + 1, value + total.item()
    note(event="step", rank=rank, step=step)
    print(f"step {step}", flush=True)  # output: what a hang timeout watches
    if rank == 0 and (step % every == 0 or stop):
        try:
            save(step, value, tear=step == tear_at and not (ckpts / "torn").exists())
        except OSError as error:
            note(event="save-failed", rank=rank, step=step, error=str(error))
            raise
    if stop:
        sys.exit(0)
    time.sleep(pause)
dist.destroy_process_group()
"""


@dataclass
class Outcome:
    detect: float | None
    mttr: float | None
    lost: int | None
    survived: bool


def _env(extra: dict[str, str]) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def _free_port() -> int:
    sys.path.insert(0, str(SRC))
    from ascendify.launch.ports import free_port

    return free_port()


def _launchers(tool: str, script: Path, port: int, work: Path) -> list[list[str]]:
    python = sys.executable
    nodes = []
    for node in (0, 1):
        if tool == "ascendify":
            argv = [
                python, "-m", "ascendify", "run", "--nnodes", "1:2", "--node-rank", str(node),
                "--master-addr", "127.0.0.1", "--master-port", str(port),
                "--local-addr", f"127.0.0.{node + 1}", "--nproc-per-node", "1",
                "--max-restarts", "3", "--hang-timeout", "3", "--grace-period", "5",
                "--log-dir", str(work / f"logs{node}"), python, str(script),
            ]  # fmt: skip
        else:
            argv = [
                python, "-m", "torch.distributed.run", "--nnodes", "1:2", "--nproc-per-node", "1",
                "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
                "--rdzv-id", "bench", "--max-restarts", "3", "--local-addr", f"127.0.0.{node + 1}",
                str(script),
            ]  # fmt: skip
        nodes.append(argv)
    return nodes


def _events(path: Path) -> list[dict[str, Any]]:
    with contextlib.suppress(OSError):
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return []


def _wait_for_step(events: Path, step: int, deadline: float) -> list[dict[str, Any]]:
    while time.time() < deadline:
        seen = _events(events)
        if any(e["event"] == "step" and e["step"] >= step for e in seen):
            return seen
        time.sleep(0.05)
    raise TimeoutError(f"the job never reached step {step}")


def _rank_pid(seen: list[dict[str, Any]], rank: int) -> int:
    return int([e for e in seen if e["event"] == "start" and e["rank"] == rank][-1]["pid"])


def _kill_tree(pid: int) -> None:
    root = psutil.Process(pid)
    for process in [root, *root.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGKILL)


def _watch_deaths(pids: list[int], spared: set[int], stop: threading.Event) -> list[float]:
    """The times at which the processes of ``pids`` (but ``spared``) ended, as seen."""
    ended: list[float] = []

    def watch() -> None:
        alive = [p for p in pids if p not in spared]
        while alive and not stop.is_set():
            for pid in list(alive):
                if not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie":
                    ended.append(time.time())
                    alive.remove(pid)
            time.sleep(0.02)

    threading.Thread(target=watch, daemon=True).start()
    return ended


def run_case(tool: str, fault: str, window: float) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as folder:
        work = Path(folder)
        ckpts = work / "ckpts"
        ckpts.mkdir()
        mounted = fault == "disk-full"
        if mounted:
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(ckpts)], check=True
            )
        try:
            return _run(tool, fault, window, work, ckpts)
        finally:
            if mounted:
                subprocess.run(["umount", "-l", str(ckpts)], check=False)


def _run(tool: str, fault: str, window: float, work: Path, ckpts: Path) -> Outcome:
    script, events = work / "loop.py", work / "events.jsonl"
    script.write_text(LOOP)
    extra = {
        "EVENTS": str(events), "CKPTS": str(ckpts), "STEPS": str(STEPS),
        "STEP_SECONDS": str(STEP_SECONDS), "SAVE_EVERY": str(SAVE_EVERY),
        "TORCH_CPP_LOG_LEVEL": "ERROR", "LOGLEVEL": "ERROR",
    }  # fmt: skip
    if fault == "torn-save":
        extra["TEAR_AT"] = str(FAULT_STEP + (-FAULT_STEP) % SAVE_EVERY)
    port = _free_port()
    nodes = [
        subprocess.Popen(
            argv, env=_env(extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for argv in _launchers(tool, script, port, work)
    ]
    deadline = time.time() + window
    stop = threading.Event()
    try:
        seen = _wait_for_step(events, FAULT_STEP, deadline)
        ranks = {0: _rank_pid(seen, 0), 1: _rank_pid(seen, 1)}
        fault_time, spared = _inject(
            fault, nodes=nodes, ranks=ranks, ckpts=ckpts, deadline=deadline
        )
        deaths = _watch_deaths(list(ranks.values()), spared, stop)
        survivors = [n for i, n in enumerate(nodes) if _node_of_fault(fault) != i]
        codes = [_wait(n, deadline) for n in survivors]
        if fault == "disk-full":
            (ckpts / "filler").unlink(missing_ok=True)
        return _outcome(_events(events), fault_time, deaths, codes)
    finally:
        stop.set()
        for node in nodes:
            if node.poll() is None:
                _kill_tree(node.pid)
            node.wait()


def _node_of_fault(fault: str) -> int | None:
    return {"node-kill": 1, "node0-kill": 0}.get(fault)


def _inject(
    fault: str,
    *,
    nodes: list[subprocess.Popen[bytes]],
    ranks: dict[int, int],
    ckpts: Path,
    deadline: float,
) -> tuple[float, set[int]]:
    """Inject ``fault``: when it came, and the rank pids it hit (not counted as detection)."""
    now = time.time()
    if fault == "rank-kill":
        os.kill(ranks[1], signal.SIGKILL)
        return now, {ranks[1]}
    if fault == "rank-hang":
        os.kill(ranks[1], signal.SIGSTOP)
        return now, {ranks[1]}
    if fault in ("node-kill", "node0-kill"):
        node = _node_of_fault(fault)
        assert node is not None
        _kill_tree(nodes[node].pid)
        return now, {ranks[node]}
    if fault == "torn-save":  # rank 0 kills itself halfway through a save
        while time.time() < deadline and not any(p.suffix == ".part" for p in ckpts.iterdir()):
            time.sleep(0.01)
        (ckpts / "torn").touch()
        return time.time(), {ranks[0]}
    # disk-full: fill the checkpoints' filesystem, free it 3 s later
    with contextlib.suppress(OSError), (ckpts / "filler").open("wb") as filler:
        while True:
            filler.write(b"\0" * 65536)
            filler.flush()
    threading.Timer(3.0, lambda: (ckpts / "filler").unlink(missing_ok=True)).start()
    return now, set()


def _wait(node: subprocess.Popen[bytes], deadline: float) -> int | None:
    try:
        return node.wait(max(0.1, deadline - time.time()))
    except subprocess.TimeoutExpired:
        return None


def _outcome(
    seen: list[dict[str, Any]], fault_time: float, deaths: list[float], codes: list[int | None]
) -> Outcome:
    before = [e["step"] for e in seen if e["event"] == "step" and e["t"] < fault_time]
    new_pids = {e["pid"] for e in seen if e["event"] == "start" and e["t"] > fault_time}
    resumed = [e for e in seen if e["event"] == "start" and e["pid"] in new_pids]
    after = [e["t"] for e in seen if e["event"] == "step" and e["pid"] in new_pids]
    survived = any(code == 0 for code in codes) and any(
        e["event"] == "step" and e["step"] == STEPS for e in seen
    )
    return Outcome(
        detect=min(deaths) - fault_time if deaths else None,
        mttr=min(after) - fault_time if after else None,
        lost=max(before) - min(e["step"] for e in resumed) if before and resumed else None,
        survived=survived,
    )


def _cell(value: float | int | None, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:.1f}{unit}" if isinstance(value, float) else f"{value}{unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--window", type=float, default=90.0, help="seconds per run, at most")
    args = parser.parse_args()
    print(
        f"{'fault':<12} {'tool':<10} {'detect':>7} {'MTTR':>7} {'lost':>5} {'survived':>8}",
        flush=True,
    )
    rows = []
    for fault in args.faults.split(","):
        outcomes = {tool: run_case(tool, fault, args.window) for tool in ("ascendify", "torchrun")}
        for tool, o in outcomes.items():
            print(
                f"{fault:<12} {tool:<10} {_cell(o.detect, 's'):>7} {_cell(o.mttr, 's'):>7} "
                f"{_cell(o.lost):>5} {'yes' if o.survived else 'no':>8}",
                flush=True,
            )
        rows.append((fault, outcomes))
    print()
    for fault, outcomes in rows:
        ours, theirs = outcomes["ascendify"], outcomes["torchrun"]
        if ours.mttr and theirs.mttr and ours.survived and theirs.survived:
            print(f"{fault}: torchrun's MTTR / ascendify's = {theirs.mttr / ours.mttr:.1f}x")
        elif theirs.survived and not ours.survived:
            print(f"{fault}: torchrun survives and ascendify does not")
        elif ours.survived and not theirs.survived:
            print(f"{fault}: ascendify survives, torchrun does not")


if __name__ == "__main__":
    main()
