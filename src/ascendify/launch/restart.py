"""The restart rule every node applies alike (below attempts, the rendezvous and the job runner)."""

from __future__ import annotations

# What a restart may cure: a rank that died, a lost node, a hang; and a node that asks to join an
# elastic job is taken in by one. A command that cannot start, or a launcher stopped by the
# platform, would end the same way again.
RESTART_CAUSES = ("exit", "hang", "node", "join")


def restarts(state: str, cause: str | None, attempt: int, max_restarts: int) -> bool:
    """Whether an attempt that ended so is followed by another one (every node agrees on it).

    ``cause`` is that of the job's first failure in the attempt, the same on every node.
    """
    return state in ("failed", "stopped") and cause in RESTART_CAUSES and attempt < max_restarts
