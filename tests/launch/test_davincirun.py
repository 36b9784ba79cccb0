"""``python -m ascendify.davincirun``'s own command line: help and usage, before anything starts."""

from __future__ import annotations

import pytest

from ascendify.davincirun import main


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_the_launchers_help_not_a_command(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([flag]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("usage: python -m ascendify.davincirun")
    assert "MA_NUM_GPUS" in shown
    assert "ascendify run --help" in shown


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "CMD is missing"),
        (["--"], "CMD is missing"),
        (["--nproc-per-node", "2", "python"], "--nproc-per-node: takes no options"),
    ],
)
def test_usage_errors_exit_2_naming_the_problem(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: python -m ascendify.davincirun")
    assert message in error
