"""``unsupported_op.csv`` and ``unsupported_op.xlsx``: the same rows, next to each other."""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import load_workbook

from tests.conftest import RunCli

SOURCE = """\
import torch

torch.cuda.nvtx.range_push("=step")
props = torch.cuda.get_device_properties(0).multi_processor_count
x = torch.ones(1).cuda()
"""


def test_unsupported_apis_are_listed_in_csv_and_xlsx(tmp_path: Path, run_cli: RunCli) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text(SOURCE)
    done = run_cli(["migrate", "-i", str(source), "-o", str(tmp_path / "out")])
    assert done.returncode == 0, done.stderr
    result = tmp_path / "out" / "project_msft"
    with (result / "unsupported_op.csv").open(newline="") as stream:
        rows = list(csv.reader(stream))
    sheet = load_workbook(result / "unsupported_op.xlsx").active
    cells = [[cell.value for cell in row] for row in sheet.iter_rows()]
    assert rows[0] == cells[0] == ["File", "Start Line", "End Line", "Rule", "Message"]
    assert len(rows) == len(cells) == 3  # nvtx and the device-property field; .cuda() is supported
    assert [row[:4] for row in rows[1:]] == [
        ["train.py", "3", "3", "NPU103"],
        ["train.py", "4", "4", "NPU104"],
    ]
    assert [row[:4] for row in cells[1:]] == [
        ["train.py", 3, 3, "NPU103"],
        ["train.py", 4, 4, "NPU104"],
    ]
    assert all(isinstance(row[4], str) and row[4] for row in cells[1:])


def test_portable_target_lists_its_own_unsupported_apis(tmp_path: Path, run_cli: RunCli) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text(SOURCE)
    done = run_cli(
        ["migrate", "-i", str(source), "-o", str(tmp_path / "out"), "--target", "portable"]
    )
    assert done.returncode == 0, done.stderr
    sheet = load_workbook(tmp_path / "out" / "project_msft" / "unsupported_op.xlsx").active
    rules = [row[3].value for row in sheet.iter_rows(min_row=2)]
    assert rules == ["PRT102", "PRT102"]
