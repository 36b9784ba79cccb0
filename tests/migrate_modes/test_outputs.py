"""The unsupported-API table of a portable run lists what the portable target left in place."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.conftest import RunCli

pytestmark = pytest.mark.slow  # every test here starts processes

SOURCE = """\
import torch

torch.cuda.nvtx.range_push("=step")
props = torch.cuda.get_device_properties(0).multi_processor_count
x = torch.ones(1).cuda()
"""


def test_portable_target_lists_its_own_unsupported_apis(tmp_path: Path, run_cli: RunCli) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text(SOURCE)
    out = tmp_path / "out"
    done = run_cli(["migrate", "-i", str(source), "-o", str(out), "--target", "portable"])
    assert done.returncode == 0, done.stderr
    sheet = load_workbook(out / "project_msft" / "unsupported_op.xlsx").active
    rows = [[cell.value for cell in row] for row in sheet.iter_rows()]
    rule = rows[0].index("Rule")
    assert [(row[0], row[1], row[rule]) for row in rows[1:]] == [
        ("train.py", 3, "PRT102"),
        ("train.py", 4, "PRT102"),
    ]
    csv_text = (out / "project_msft" / "unsupported_op.csv").read_text()
    assert csv_text.count("PRT102") == 2
    assert "NPU10" not in csv_text  # the NPU rules do not report in a portable run
