"""A project's framework configuration through the whole command: YAML, JSON and shell files beside
the Python ones are migrated in the same run, reported once, and analysed by ``analyze``."""

from __future__ import annotations

import csv
import io
import stat
from pathlib import Path

from rich.console import Console

from ascendify.analyze.static import StaticAnalysis, analyze_path
from ascendify.migrate import Options, Settings, run_migration
from ascendify.migrate._modes import Modes, Target
from ascendify.targets import DEFAULT_VERSION

TRAIN = b"""from transformers import TrainingArguments

args = TrainingArguments(output_dir="out", ddp_backend="nccl", torch_compile_backend="inductor")
"""
RUN = b"""#!/bin/bash
# --ddp_backend nccl on the GPU cluster
accelerate launch --config_file accelerate.yaml train.py \\
    --ddp_backend nccl \\
    --tf32 True \\
    --optim paged_adamw_8bit
"""
ACCELERATE = b"""compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU  # eight cards
gpu_ids: all
num_processes: 8
"""
DEEPSPEED = b"""{
  "train_micro_batch_size_per_gpu": "auto",
  "optimizer": {"type": "Lamb", "params": {"lr": "auto"}}
}
"""
DATA = b'{"train_batch_size_note": "not a DeepSpeed config", "rows": [1, 2]}\n'


def _project(root: Path) -> Path:
    source = root / "proj"
    (source / "configs").mkdir(parents=True)
    (source / "train.py").write_bytes(TRAIN)
    (source / "run.sh").write_bytes(RUN)
    (source / "run.sh").chmod(0o755)
    (source / "configs" / "accelerate.yaml").write_bytes(ACCELERATE)
    (source / "configs" / "ds.json").write_bytes(DEEPSPEED)
    (source / "data.json").write_bytes(DATA)
    return source


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def _migrate(source: Path, output: Path, target: Target = Target.NPU, check: bool = False) -> int:
    options = Options(
        source=source,
        output=None if check else output,
        settings=Settings(modes=Modes(target=target)),
        check=check,
        companion=None if check else StaticAnalysis(DEFAULT_VERSION),
    )
    quiet = Console(file=io.StringIO())
    return run_migration(options, quiet, quiet)


def test_configuration_files_are_migrated_with_the_python_files(tmp_path: Path) -> None:
    source = _project(tmp_path)
    assert _migrate(source, tmp_path / "out") == 0
    result = tmp_path / "out" / "proj_msft"
    assert (result / "train.py").read_bytes() == TRAIN.replace(b'"nccl"', b'"hccl"')
    assert (result / "run.sh").read_bytes() == (
        b"#!/bin/bash\n"
        b"# --ddp_backend nccl on the GPU cluster\n"
        b"accelerate launch --config_file accelerate.yaml train.py \\\n"
        b"    --ddp_backend hccl \\\n"
        b"    --optim paged_adamw_8bit\n"
    )
    assert stat.S_IMODE((result / "run.sh").stat().st_mode) == 0o755  # still runs as a script
    assert (result / "configs" / "accelerate.yaml").read_bytes() == ACCELERATE.replace(
        b"MULTI_GPU", b"MULTI_NPU"
    )
    assert (result / "configs" / "ds.json").read_bytes() == DEEPSPEED  # reported only
    assert (result / "data.json").read_bytes() == DATA

    changes = {
        (row["File"], row["Rule"], row["Operation Type"])
        for row in _rows(result / "change_list.csv")
    }
    assert changes == {
        ("train.py", "CFG101", "MODIFY"),
        ("train.py", "CFG110", "UNSUPPORTED"),
        ("run.sh", "CFG101", "MODIFY"),
        ("run.sh", "CFG105", "DELETE"),
        ("run.sh", "CFG107", "UNSUPPORTED"),
        ("configs/accelerate.yaml", "CFG201", "MODIFY"),
        ("configs/ds.json", "CFG301", "UNSUPPORTED"),
    }
    # What is left for a human is listed once, though the analysis of SRC found it too.
    left = [(row["File"], row["Rule"]) for row in _rows(result / "unsupported_op.csv")]
    assert sorted(left) == [
        ("configs/ds.json", "CFG301"),
        ("run.sh", "CFG107"),
        ("train.py", "CFG110"),
    ]


def test_check_names_the_configuration_files_that_would_change(tmp_path: Path) -> None:
    source = _project(tmp_path)
    (source / "train.py").write_bytes(b"print('nothing to do')\n")
    quiet = io.StringIO()
    options = Options(source=source, output=None, check=True)
    assert run_migration(options, Console(file=io.StringIO()), Console(file=quiet, width=200)) == 1
    would = sorted(
        line for line in quiet.getvalue().splitlines() if line.startswith("would change")
    )
    assert would == ["would change configs/accelerate.yaml", "would change run.sh"]


def test_the_portable_target_lets_the_host_choose_the_backend(tmp_path: Path) -> None:
    source = _project(tmp_path)
    assert _migrate(source, tmp_path / "out", Target.PORTABLE) == 0
    result = tmp_path / "out" / "proj_msft"
    assert b"ddp_backend" not in (result / "train.py").read_bytes()
    run = (result / "run.sh").read_bytes()
    assert b"--ddp_backend" not in run.split(b"\n", 2)[2]  # the comment keeps its words
    assert b"--tf32 True" in run  # reported: it would change CUDA hosts' numerics
    assert (result / "configs" / "accelerate.yaml").read_bytes() == ACCELERATE  # works on both


def test_analyze_lists_the_configuration_findings(tmp_path: Path) -> None:
    source = _project(tmp_path)
    found = analyze_path(source, jobs=1)
    rows = sorted((f.file, f.start_line, f.code, f.op) for f in found.findings)
    assert rows == [
        ("configs/accelerate.yaml", 2, "CFG201", "distributed_type: MULTI_GPU"),
        ("configs/ds.json", 3, "CFG301", "optimizer.type"),
        ("run.sh", 4, "CFG101", "--ddp_backend nccl"),
        ("run.sh", 5, "CFG105", "--tf32 True"),
        ("run.sh", 6, "CFG107", "--optim paged_adamw_8bit"),
        ("train.py", 3, "CFG101", 'ddp_backend="nccl"'),
        ("train.py", 3, "CFG110", 'torch_compile_backend="inductor"'),
    ]
    severities = {f.code: f.severity.value for f in found.findings}
    assert severities == {
        "CFG101": "info",  # migrate rewrites it
        "CFG105": "warning",  # rewritten, but numerics change
        "CFG107": "error",
        "CFG110": "error",
        "CFG201": "info",
        "CFG301": "error",
    }


def test_a_suppression_comment_keeps_a_setting(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    text = b"distributed_type: MULTI_GPU  # ascendify: ignore[CFG201]\nnum_processes: 2\n"
    (source / "accelerate.yaml").write_bytes(text)
    assert _migrate(source, tmp_path / "out") == 0
    assert (tmp_path / "out" / "proj_msft" / "accelerate.yaml").read_bytes() == text
    assert analyze_path(source).findings == []


def test_a_large_data_file_is_copied_as_any_other_file(tmp_path: Path) -> None:
    source = tmp_path / "proj"
    source.mkdir()
    rows = b'{"train_batch_size": 1, "rows": [' + b"0, " * 600 + b"0]}\n"
    (source / "data.json").write_bytes(rows)
    options = Options(source=source, output=tmp_path / "out", settings=Settings(max_bytes=1000))
    console = io.StringIO()
    assert (
        run_migration(options, Console(file=io.StringIO()), Console(file=console, width=200)) == 0
    )
    assert (tmp_path / "out" / "proj_msft" / "data.json").read_bytes() == rows
    assert "copied unchanged data.json" not in console.getvalue()  # no warning: not a config
    assert "other files copied                    │     1" in console.getvalue()
