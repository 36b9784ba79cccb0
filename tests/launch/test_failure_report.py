"""How a failure reads: the root-cause text and the launcher's exit code."""

from __future__ import annotations

from ascendify.launch import RankFailure


def failure(exit_code: int, **extra: object) -> RankFailure:
    fields: dict[str, object] = {
        "node_rank": 1,
        "rank": 5,
        "local_rank": 1,
        "device_id": "3",
        "pid": 4242,
        "exit_code": exit_code,
        "time": 0.0,
        "log_path": "/logs/rank_5.log",
    }
    fields.update(extra)
    return RankFailure(**fields)  # type: ignore[arg-type]


def test_exit_code_failure_names_rank_node_device_time_and_log() -> None:
    text = failure(3, last_lines=("Traceback (most recent call last):", "ValueError: x")).describe()
    assert text.splitlines() == [
        "rank 5 (node 1, local rank 1, device 3, pid 4242) failed first at "
        "1970-01-01 00:00:00 UTC: exit code 3",
        "log on node 1: /logs/rank_5.log, last lines:",
        "    Traceback (most recent call last):",
        "    ValueError: x",
    ]
    assert failure(3).launcher_exit_code == 3


def test_signal_is_named_and_exit_code_follows_the_shell_convention() -> None:
    killed = failure(-9, error="RuntimeError: out of memory")
    assert "killed by signal SIGKILL" in killed.describe()
    assert "error: RuntimeError: out of memory" in killed.describe()
    assert killed.launcher_exit_code == 137


def test_node_failure_reads_as_a_node() -> None:
    gone = RankFailure.of_node(0, "lost contact with node 0's rendezvous store")
    assert gone.describe() == "node 0 failed: lost contact with node 0's rendezvous store"
    assert gone.launcher_exit_code == 1


def test_lines_the_console_already_showed_are_not_repeated_but_the_hint_is() -> None:
    shown = failure(1, last_lines=("Traceback (most recent call last):",), hint="RUN001: do x")
    assert shown.describe(show_lines=False).splitlines()[1:] == [
        "log on node 1: /logs/rank_5.log",
        "hint: RUN001: do x",
    ]
    assert "    Traceback (most recent call last):" in shown.describe()
