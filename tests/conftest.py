"""Shared fixtures: run the real command line in a subprocess, the way users do."""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from _pytest.nodeid import NodeId

# Tests that start processes are marked ``slow`` so that ``pytest -m "not slow"`` stays a fast inner
# loop. Python's audit events see every process start (subprocess, fork, spawn, exec), so a test
# body that starts one without the mark fails and names the rule.
PROCESS_EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec"}
)
_process_starts: list[str] = []


def _record_process_start(event: str, _args: tuple[object, ...]) -> None:
    if event in PROCESS_EVENTS:
        _process_starts.append(event)


sys.addaudithook(_record_process_start)

# A shell that starts a command in the background without job control (`bash .ci/run &`) starts it
# with SIGINT ignored, and an ignored signal stays ignored across exec: every process a test starts
# would then shrug off the Ctrl-C the tests send. Restored here, the children start with the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    _process_starts.clear()
    result = yield
    if _process_starts and item.get_closest_marker("slow") is None:
        raise pytest.fail.Exception(
            f"{item.nodeid} started a process ({_process_starts[0]}): mark it @pytest.mark.slow"
        )
    return result


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # pytest-xdist's --dist loadgroup sends the tests of an xdist_group to one worker by adding
    # "@group" to each test's node id, which it writes to ``item._nodeid``; pytest 9.2 reads the id
    # from ``item._id`` instead, so the groups were lost and each worker that drew a Ray test started
    # a Ray cluster of its own (pytest-xdist issue 1386). The grouped id is carried over to where
    # pytest reads it; drop this once pytest-xdist writes it there itself.
    for item in items:
        grouped = getattr(item, "_nodeid", None)
        if isinstance(grouped, str) and grouped != item.nodeid:
            item._id = NodeId.parse(grouped)


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection imported (torch, botocore, moto: over a million objects) lives until the end,
    # yet every full garbage collection walked it again: during the tests, then several times at
    # exit (pytest's unraisable-exception check, interpreter shutdown), seconds in all. Frozen, the
    # collector skips it; what the tests create is collected as before.
    gc.freeze()


SRC = Path(__file__).resolve().parents[1] / "src"


def needs(*packages: str) -> pytest.MarkDecorator:
    """Skip unless every one of ``packages`` is installed, found without importing it: a framework
    imported at collection (transformers, accelerate, DeepSpeed: seconds each) would be paid by every
    test worker, also in the fast loop that deselects the tests which run it."""
    missing = [name for name in packages if importlib.util.find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


def ascendify_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process that must import this checkout of ascendify."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


RunCli = Callable[..., subprocess.CompletedProcess[str]]
# How long a command a test runs may take before it counts as hung. It bounds a hang, it does not
# measure speed: on a machine whose two cores are shared with other work (load 10-24), importing
# torch alone took minutes.
HANG_BOUND = 600.0


def run_bounded(
    argv: Sequence[str], timeout: float = HANG_BOUND, **options: object
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` (text, captured, unchecked) whose timeout fails the test with what it
    was waiting for and the output so far."""
    try:
        return subprocess.run(  # type: ignore[call-overload, no-any-return]
            argv, capture_output=True, text=True, timeout=timeout, check=False, **options
        )
    except subprocess.TimeoutExpired as expired:
        said = "".join(_text(part) for part in (expired.stdout, expired.stderr))
        raise AssertionError(
            f"`{' '.join(map(str, argv))}` did not end within {timeout:g}s (a hang bound); "
            f"its output so far:\n{said[-4000:]}"
        ) from None


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


@pytest.fixture
def run_cli() -> RunCli:
    """Run ``python -m ascendify ARGS`` and return the completed process (text mode)."""

    def run(
        args: Sequence[str],
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = HANG_BOUND,
    ) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "ascendify", *args]
        return run_bounded(argv, timeout, cwd=cwd, env=ascendify_env(env))

    return run


# torch 2.13's gloo backend can abort a process while the interpreter shuts down, after the script
# has finished its work ("terminate called without an active exception": gloo worker threads still
# hold tensors at finalization). It is torch's, not ours, and rare; a run that ends that way is
# repeated once, and any other failure, or the same abort twice, stands.
GLOO_TEARDOWN_ABORT = "terminate called without an active exception"


def again_after_teardown_abort(
    result: subprocess.CompletedProcess[str],
    rerun: Callable[[], subprocess.CompletedProcess[str]],
) -> subprocess.CompletedProcess[str]:
    if result.returncode != 0 and GLOO_TEARDOWN_ABORT in result.stderr:
        return rerun()
    return result


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (``1m``) mounted on ``folder``, a new folder: a disk that fills. The
    test is skipped, with the reason, where mounting is not allowed (it needs root)."""
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False, timeout=30,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, timeout=30)
