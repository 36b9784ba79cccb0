"""The restart rule every node applies alike (below attempts, the rendezvous and the job runner)."""

from __future__ import annotations

from typing import Any

# What a restart may cure: a rank that died, a lost node, a hang; and a node that asks to join an
# elastic job is taken in by one. A command that cannot start, or a launcher stopped by the
# platform, would end the same way again.
RESTART_CAUSES = ("exit", "hang", "node", "join")


def restarts(state: str, cause: str | None, attempt: int, max_restarts: int) -> bool:
    """Whether an attempt that ended so is followed by another one (every node agrees on it).

    ``cause`` is that of the job's first failure in the attempt, the same on every node.
    """
    return state in ("failed", "stopped") and cause in RESTART_CAUSES and attempt < max_restarts


def restart_told(attempt: dict[str, Any], max_restarts: int, ran_on: str = "") -> str:
    """A restart as the console, the job's events and its page tell it: the attempt (a record
    of ``run_summary.json``'s ``attempts``), the rank that ended it and its exit code, why,
    ``ran_on`` (where the job's runner knows the nodes), and which restart follows."""
    number = attempt["attempt"]
    codes = attempt["exit_codes"]
    first = attempt.get("rank")  # the rank that failed first, where the record names it
    if first is not None and codes.get(str(first)):
        failed = [(str(first), codes[str(first)])]
    else:  # one that exited by itself before one stopped by signal because of it
        failed = sorted(((r, code) for r, code in codes.items() if code), key=lambda f: f[1] < 0)
    who = "".join(
        f"rank {rank} {f'killed by signal {-code}' if code < 0 else f'exited with {code}'}, "
        for rank, code in failed[:1]
    )
    return (
        f"attempt {number} ended ({attempt['cause']}): {who}{attempt['reason']}{ran_on}; "
        f"restart {number + 1} of {max_restarts}"
    )
