from __future__ import annotations

import argparse

import pytest

from ascendify import __version__
from ascendify._parallel import default_jobs
from ascendify.cli import build_parser, main
from tests.conftest import RunCli


def test_version_command_prints_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: ascendify" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["no-such-command"])
    assert exit_info.value.code == 2


@pytest.mark.slow
def test_module_entry_point_runs_in_a_fresh_interpreter(run_cli: RunCli) -> None:
    result = run_cli(["--version"])
    assert result.returncode == 0
    assert result.stdout.strip() == f"ascendify {__version__}"


def _sub_commands(parser: argparse.ArgumentParser) -> list[str]:
    return [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def test_job_help_names_every_sub_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["job", "--help"])
    assert exit_info.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the description
    job = build_parser()._subparsers._group_actions[0].choices["job"]  # type: ignore[union-attr]
    job.format_help()  # adds its arguments
    names = _sub_commands(job)
    assert len(names) >= 8
    assert f": {', '.join(names)}." in shown


@pytest.mark.parametrize("command", ["migrate", "analyze"])
@pytest.mark.parametrize("jobs", ["0", "-3", "100000", "many"])
def test_worker_counts_are_bounded(
    capsys: pytest.CaptureFixture[str], command: str, jobs: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "-i", "src", "-o", "out", "-j", jobs])
    assert exit_info.value.code == 2
    most = max(64, 4 * default_jobs())
    assert f"takes a number of workers from 1 to {most}, not '{jobs}'" in capsys.readouterr().err
    assert build_parser().parse_args([command, "-i", "s", "-o", "o", "-j", str(most)]).jobs == most


@pytest.mark.parametrize("limit", ["-1", "x", "1.5"])
def test_job_list_limit_is_a_count(capsys: pytest.CaptureFixture[str], limit: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["job", "list", "--limit", limit])
    assert exit_info.value.code == 2
    assert f"takes a count, 0 or more, not '{limit}'" in capsys.readouterr().err
    assert build_parser().parse_args(["job", "list", "--limit", "0"]).limit == 0
