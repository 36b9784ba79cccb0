"""A dump on disk: records written and read back; missing files named (fast, no torch)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ascendify.compare.records import MANIFEST, load_dump, rank_file, read_rank, record_line
from ascendify.errors import AscendifyError
from tests.compare.synthetic import CLEAN, record, run


def _write(folder: Path, ranks: dict[int, list]) -> Path:  # type: ignore[type-arg]
    folder.mkdir()
    for rank, records in ranks.items():
        lines = [json.dumps({"header": {"rank": rank}}) + "\n", *map(record_line, records)]
        (folder / rank_file(rank)).write_text("".join(lines), encoding="utf-8")
    manifest = {"command": ["python", "t.py"], "ranks": {str(r): {"rank": r} for r in ranks}}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_records_read_back_as_written(tmp_path: Path) -> None:
    records = run(CLEAN)
    nan = record("x", 1, 2, (math.nan,), math.inf)
    dump = load_dump(_write(tmp_path / "d", {0: [*records, nan]}))
    assert dump.records[: len(records)] == tuple(records)
    assert math.isnan(dump.records[-1].inputs[0].min)
    assert dump.ranks == [0]


def test_a_missing_dump_folder_manifest_or_rank_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AscendifyError, match="no such dump folder"):
        load_dump(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(AscendifyError, match=r"manifest\.json: missing"):
        load_dump(tmp_path / "empty")
    folder = _write(tmp_path / "d", {0: run(CLEAN), 1: run(CLEAN, rank=1)})
    (folder / rank_file(1)).unlink()
    with pytest.raises(
        AscendifyError, match=r"rank1\.jsonl: missing \(the manifest lists rank 1\)"
    ):
        load_dump(folder)


def test_a_damaged_line_is_named_with_its_number(tmp_path: Path) -> None:
    path = tmp_path / rank_file(0)
    path.write_text('{"header": {}}\n' + record_line(run(CLEAN)[0]) + "{broken\n", encoding="utf-8")
    with pytest.raises(AscendifyError, match=r"rank0\.jsonl:3: not a dump record"):
        list(read_rank(path, 0))
