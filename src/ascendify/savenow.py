"""Save now, and saves that are never half written: what a training loop needs to lose at most
the step in flight when the launcher stops it.

Whenever the launcher stops a rank that is still running (another rank failed, a node was lost
or asks to join, a hang, a stop signal), it first creates the file named by
``ASCENDIFY_SAVE_NOW_FILE`` in the rank's environment, then sends SIGTERM to the rank's process
group, and SIGKILL only after ``--grace-period``. A loop that catches SIGTERM, ends its step,
saves and exits within the grace period loses nothing; in three lines, with no import of ours::

    import signal; stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    # after each step:  if stop: save(step); sys.exit(0)

:func:`save_requested` does the same (its first call installs the handler) and also reads the
file, for a rank whose SIGTERM is ignored or caught elsewhere. :func:`saving` writes a
checkpoint beside its final name and renames it into place once complete, so a rank killed in
the middle of a save leaves the previous checkpoint whole and the torn one is never resumed.
Standard library only (no torch import): cheap to call every step.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

SAVE_NOW_VARIABLE = "ASCENDIFY_SAVE_NOW_FILE"
_asked = threading.Event()  # SIGTERM came


def _on_sigterm(_signum: int, _frame: object) -> None:
    _asked.set()


def save_requested() -> bool:
    """Whether the launcher asked this rank to save now (SIGTERM came, or the file exists).

    The first call, from the main thread, makes SIGTERM a request instead of the end of the
    process (unless the program has a SIGTERM handler of its own): call it every step and exit
    once it says True (the launcher kills after the grace period).
    """
    main = threading.current_thread() is threading.main_thread()
    if main and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:  # never one of the program's
        signal.signal(signal.SIGTERM, _on_sigterm)
    path = os.environ.get(SAVE_NOW_VARIABLE)
    return _asked.is_set() or bool(path and os.path.exists(path))


def release_sigterm() -> None:
    """Give SIGTERM its default effect back if :func:`save_requested` made it a request (a
    framework hook whose training has ended: a later SIGTERM must end the process again)."""
    if signal.getsignal(signal.SIGTERM) == _on_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def saving(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A path beside ``path`` to write the checkpoint to: once the block ends without an
    error it is flushed to disk and renamed over ``path`` (one atomic step); otherwise it is
    removed. ``with saving("ckpt.pt") as part: torch.save(state, part)``."""
    final = Path(path)
    part = final.with_name(f".{final.name}.part-{os.getpid()}")
    try:
        yield part
        with open(part, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(part, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            part.unlink()


def request_save(env: Mapping[str, str]) -> None:
    """The launcher's side: create the save-now file of the rank whose environment is ``env``."""
    path = env.get(SAVE_NOW_VARIABLE)
    if not path:
        return
    with contextlib.suppress(OSError):  # a full disk: SIGTERM still asks
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).touch()
