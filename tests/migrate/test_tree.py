"""The tree layer as a library: planning, huge files, preview mode."""

from __future__ import annotations

import csv
import os
import stat
from pathlib import Path

from ascendify.migrate import Options, Settings, migrate_tree, plan_tree, prepare_output
from ascendify.migrate._report import LOG_FILE, RunLog, write_change_list


def test_huge_python_files_are_copied_unchanged_without_being_read(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    big = b"x = torch.ones(1).cuda()\n" * 100
    (source / "big.py").write_bytes(big)
    (source / "small.py").write_bytes(b"import torch\nx = torch.ones(1).cuda()\n")
    options = Options(source=source, output=tmp_path / "out", settings=Settings(max_bytes=1000))
    result_dir = prepare_output(options)
    assert result_dir == tmp_path / "out" / "proj_msft"
    result = migrate_tree(options, result_dir, plan_tree(source))
    statuses = {outcome.path: (outcome.status, outcome.detail) for outcome in result.files}
    assert statuses == {"big.py": ("skipped", "file too large"), "small.py": ("changed", "")}
    assert (result_dir / "big.py").read_bytes() == big


def test_a_copy_keeps_the_mode_and_times_a_changed_file_its_mode(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    (source / "tool.py").write_bytes(b"print('no device here')\n")
    (source / "train.py").write_bytes(b"import torch\nx = torch.ones(1).cuda()\n")
    for name, mode in (("tool.py", 0o751), ("train.py", 0o640)):
        (source / name).chmod(mode)
        os.utime(source / name, ns=(1_000_000_000, 2_000_000_000))
    options = Options(source=source, output=tmp_path / "out")
    result_dir = prepare_output(options)
    assert result_dir is not None
    migrate_tree(options, result_dir, plan_tree(source))
    copied, changed = (result_dir / "tool.py").stat(), (result_dir / "train.py").stat()
    assert (stat.S_IMODE(copied.st_mode), copied.st_mtime_ns) == (0o751, 2_000_000_000)
    assert (result_dir / "tool.py").read_bytes() == (source / "tool.py").read_bytes()
    assert stat.S_IMODE(changed.st_mode) == 0o640
    assert changed.st_mtime_ns != 2_000_000_000  # new content, new time


def test_preview_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    (source / "a.py").write_bytes(b"import torch\nx = torch.ones(1).cuda()\n")
    options = Options(source=source, output=tmp_path / "out", check=True, diff=True)
    assert prepare_output(options) is None
    result = migrate_tree(options, None, plan_tree(source))
    assert not (tmp_path / "out").exists()
    assert "+x = torch.ones(1).npu()\n" in result.files[0].diff


def test_change_list_cells_cannot_run_as_spreadsheet_formulas(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    (source / "=cmd.py").write_bytes(b"import torch\nx = torch.ones(1).cuda()\n")
    options = Options(source=source, output=tmp_path / "out")
    result_dir = prepare_output(options)
    assert result_dir is not None
    result = migrate_tree(options, result_dir, plan_tree(source))
    write_change_list(result, tmp_path / "changes.csv")
    with (tmp_path / "changes.csv").open(newline="") as stream:
        files = {row["File"] for row in csv.DictReader(stream)}
    assert files == {"'=cmd.py"}


def test_the_log_rotates_at_one_mebibyte_keeping_ten(tmp_path: Path) -> None:
    log = RunLog(tmp_path)
    line = "x" * 1000
    for _ in range(12 * 1024):  # about 12 MiB
        log.info(line)
    log.close()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted([LOG_FILE, *(f"{LOG_FILE}.{i}" for i in range(1, 11))])
    assert all(path.stat().st_size <= 1024 * 1024 for path in tmp_path.iterdir())


def test_the_log_counts_what_its_file_holds_already(tmp_path: Path) -> None:
    (tmp_path / LOG_FILE).write_text("x" * (1024 * 1024 - 100) + "\n")
    log = RunLog(tmp_path)
    log.info("y" * 200)  # would pass the limit: the existing file becomes .1
    log.close()
    assert (tmp_path / f"{LOG_FILE}.1").stat().st_size == 1024 * 1024 - 99
    assert "y" * 200 in (tmp_path / LOG_FILE).read_text()


def _migrated(tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    """The migrated text of each file of a project made of ``files`` (written nowhere)."""
    source = tmp_path / "proj"
    for rel, text in files.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    options = Options(source=source, output=tmp_path / "out", check=True, diff=True)
    result = migrate_tree(options, None, plan_tree(source))
    return {outcome.path: outcome.diff for outcome in result.files}


def test_torch_brought_by_a_star_import_of_a_project_module_is_migrated(tmp_path: Path) -> None:
    diffs = _migrated(
        tmp_path,
        {
            "utils.py": "import os\nimport torch\nimport torch.nn as nn\n_private = 1\n",
            "train.py": "from utils import *\n\nif torch.cuda.is_available():\n"
            "    net = nn.Linear(2, 2).cuda()\n",
            "pkg/__init__.py": "from .common import *\n",
            "pkg/common.py": "import torch as th\n__all__ = ['th']\n",
            "pkg/run.py": "from pkg import th\nth.cuda.synchronize()\n",
            "pkg/hidden.py": "import torch as th\n__all__ = []\n",
            "pkg/other.py": "from .hidden import *\nth.cuda.synchronize()\n",
        },
    )
    assert "+if torch_npu.npu.is_available():\n" in diffs["train.py"]
    assert "+import torch_npu" in diffs["train.py"]
    assert "+torch_npu.npu.synchronize()\n" in diffs["pkg/run.py"]  # through a package's star
    assert not diffs["pkg/other.py"]  # __all__ leaves th out of the star import
