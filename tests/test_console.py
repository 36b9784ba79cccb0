"""Tables printed to a pipe keep every identifier and path whole (rich folds them on a pipe's
default 80 columns); on a terminal they still fit the window."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ascendify._console import console
from ascendify.analyze.report import print_summary
from ascendify.analyze.static import analyze_path

DEEP = Path("src", *["a_rather_long_package_directory"] * 4, "distributed_training_entrypoint.py")


def test_an_analyze_table_in_a_pipe_keeps_paths_and_identifiers_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / DEEP
    script.parent.mkdir(parents=True)
    script.write_text(
        "import torch\nscaler = torch.cuda.amp.GradScaler()\nx = torch.cuda.current_device()\n"
    )
    print_summary(analyze_path(tmp_path), tmp_path / "out")
    printed = capsys.readouterr().out
    assert f"{DEEP}:2" in printed  # one line, not folded at 80 columns
    assert "torch.cuda.amp.GradScaler" in printed
    assert max(map(len, printed.splitlines())) > 80


def test_a_terminal_console_fits_the_window() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert console(file=Terminal()).width < 100_000
    assert console(file=io.StringIO()).width == 100_000
