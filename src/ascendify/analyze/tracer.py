"""The traced child: runs a user's script under a dispatch mode that records every operator it executes.

Started by :mod:`ascendify.analyze.trace` as ``python -m ascendify.analyze.tracer --trace-out FILE [limits] --
script.py args...`` (or ``-- -m package args...``). It records below autograd, so backward and optimizer operators
are seen too, and after torch's composite operators have decomposed. For each operator it keeps the tensor dtypes
and the innermost line of the user's project that led to it; classification against torch_npu happens in the parent.

The raw trace is written as it grows, one JSON object a line (:class:`TraceWriter`): every new operator, dtype and
line as it is first seen, the call counts at most once a second, and a last line when the script ends, fails or
reaches a limit. A script that leaves through ``os._exit`` (which skips every exit hook) or is killed still leaves
every operator it ran.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import runpy
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Registrations that make an operator run on any device without a device kernel of its own.
COMPOSITE_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)
RUNTIME_REDIRECT = "ascendify.transfer_to_npu"
_LIBRARY_MARKERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")
_ASCENDIFY_DIR = str(Path(__file__).resolve().parents[1]) + os.sep


class TraceLimitReached(BaseException):
    """Stops the script at a limit; a BaseException so that ``except Exception`` in user code lets it through."""


Key = tuple[Any, tuple[str, ...], str, int]


class TraceWriter:
    """The trace file, appended to as the trace grows; only the traced process writes (a forked DataLoader worker
    records on, but writes nothing)."""

    FLUSH_SECONDS = 1.0  # call counts are written at most this often (and at the end)

    def __init__(self, path: Path) -> None:
        self.owner = os.getpid()
        self._descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        self._flushed = time.monotonic()

    def line(self, entry: dict[str, Any]) -> None:
        if os.getpid() == self.owner:
            os.write(self._descriptor, (json.dumps(entry) + "\n").encode())

    def due(self) -> bool:
        return time.monotonic() - self._flushed >= self.FLUSH_SECONDS

    def counts(self, calls: dict[int, int], total: int, seconds: float) -> None:
        """The call counts that changed since the last write."""
        self._flushed = time.monotonic()
        self.line({"calls": sorted(calls.items()), "total": total, "seconds": round(seconds, 3)})

    def close(self) -> None:
        os.close(self._descriptor)


class OperatorRecorder(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __init__(self, project_root: Path, max_ops: int | None, writer: TraceWriter) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.project_root = str(project_root.resolve()) + os.sep
        self.max_ops = max_ops
        self.total = 0
        self.calls: dict[Key, int] = {}
        self._index: dict[Key, int] = {}  # the order in which the writer wrote each key
        self._unwritten: dict[int, int] = {}  # index -> calls, changed since the last write
        self._ops_written: set[str] = set()
        self._writer = writer
        self._started = time.perf_counter()
        self._is_user_file: dict[str, bool] = {}

    def __torch_dispatch__(
        self,
        func: Any,
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        self.total += 1
        if self.max_ops is not None and self.total > self.max_ops:
            raise TraceLimitReached("max-ops")
        result = func(*args, **kwargs)
        file, line = self._user_location(sys._getframe(1))
        key = (func, _dtypes(args, kwargs, result), file, line)
        calls = self.calls[key] = self.calls.get(key, 0) + 1
        if calls == 1:
            self._write_new(key)
        else:
            self._unwritten[self._index[key]] = calls
        if self.total % 256 == 0 and self._writer.due():
            self.flush()
        return result

    def _write_new(self, key: Key) -> None:
        """A key seen for the first time: its line at once (with its operator's registrations, when new)."""
        func, dtypes, file, line = key
        name = func.name()
        if name not in self._ops_written:
            self._ops_written.add(name)
            self._writer.line({"op": name, "kernels": _kernels(name)})
        self._index[key] = len(self._index)
        self._writer.line({"record": [name, list(dtypes), file, line]})

    def flush(self) -> None:
        """Write the call counts that changed (bounded: at most one line per key, once a second)."""
        self._writer.counts(self._unwritten, self.total, time.perf_counter() - self._started)
        self._unwritten = {}

    def _user_location(self, frame: FrameType | None) -> tuple[str, int]:
        """The innermost frame in the user's project (not in an installed library, not ours)."""
        while frame is not None:
            filename = frame.f_code.co_filename
            is_user = self._is_user_file.get(filename)
            if is_user is None:
                is_user = self._is_user_file[filename] = self._in_project(filename)
            if is_user:
                return filename, frame.f_lineno
            frame = frame.f_back
        return "", 0

    def _in_project(self, filename: str) -> bool:
        path = os.path.realpath(filename)
        return (
            path.startswith(self.project_root)
            and not path.startswith(_ASCENDIFY_DIR)
            and not any(marker in path for marker in _LIBRARY_MARKERS)
        )


def _kernels(name: str) -> list[str]:
    """The composite registrations torch has for an operator."""
    return [
        key for key in COMPOSITE_KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(name, key)
    ]


def _dtypes(args: Sequence[Any], kwargs: dict[str, Any], result: Any) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for value in (*args, *kwargs.values(), result):
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, torch.Tensor):
                found[str(item.dtype).removeprefix("torch.")] = None
            elif isinstance(item, torch.dtype):
                found[str(item).removeprefix("torch.")] = None
    return tuple(found)


def _enable_runtime_redirect() -> bool:
    """Send CUDA calls to the device this machine has, when ascendify's runtime redirect is available."""
    if importlib.util.find_spec(RUNTIME_REDIRECT) is None:
        return False
    importlib.import_module(RUNTIME_REDIRECT)
    return True


def _raise_time_limit(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise TraceLimitReached("max-seconds")


def _run_target(target: Sequence[str]) -> None:
    if target[0] == "-m":
        sys.argv = [target[1], *target[2:]]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(target[1], run_name="__main__", alter_sys=True)
    else:
        script = os.path.abspath(target[0])
        sys.argv = [target[0], *target[1:]]
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")


def _project_root(target: Sequence[str]) -> Path:
    return Path.cwd() if target[0] == "-m" else Path(os.path.abspath(target[0])).parent


def trace(target: Sequence[str], out: Path, max_ops: int | None, max_seconds: float | None) -> int:
    """Run ``target`` under the recorder, writing the raw trace to ``out``; returns the script's exit code."""
    redirected = _enable_runtime_redirect()
    writer = TraceWriter(out)
    writer.line(
        {
            "start": {
                "project_root": str(_project_root(target)),
                "runtime_redirect": redirected,
                "torch_version": torch.__version__,
            }
        }
    )
    recorder = OperatorRecorder(_project_root(target), max_ops, writer)
    stopped: str | None = None
    error: str | None = None
    exit_code = 0
    if max_seconds:
        signal.signal(signal.SIGALRM, _raise_time_limit)
        signal.setitimer(signal.ITIMER_REAL, max_seconds)
    try:
        with recorder:
            _run_target(target)
    except TraceLimitReached as limit:
        stopped = str(limit)
    except SystemExit as exit_request:
        exit_code = _exit_status(exit_request.code)
    except BaseException as failure:
        traceback.print_exc()
        error = f"{type(failure).__name__}: {failure}"
        exit_code = 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    recorder.flush()
    total = min(recorder.total, max_ops or recorder.total)
    writer.line(
        {"end": {"total_ops": total, "stopped": stopped, "exit_code": exit_code, "error": error}}
    )
    writer.close()
    return exit_code


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ascendify.analyze.tracer")
    parser.add_argument("--trace-out", type=Path, required=True)
    parser.add_argument("--max-ops", type=int)
    parser.add_argument("--max-seconds", type=float)
    parser.add_argument("target", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    target = args.target[1:] if args.target[:1] == ["--"] else args.target
    if not target or target == ["-m"]:
        parser.error("nothing to run: give script.py args... or -m module args...")
    return trace(target, args.trace_out, args.max_ops, args.max_seconds)


if __name__ == "__main__":
    sys.exit(main())
