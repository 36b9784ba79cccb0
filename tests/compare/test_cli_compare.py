"""``ascendify compare`` on the command line: bad input exits 2 with one line naming it (in-process, fast)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendify.cli import main
from ascendify.compare.records import MANIFEST, rank_file, record_line
from tests.compare.synthetic import CLEAN, changed, record, run


def _dump(folder: Path, records: list) -> Path:  # type: ignore[type-arg]
    folder.mkdir()
    lines = [json.dumps({"header": {"rank": 0}}) + "\n", *map(record_line, records)]
    (folder / rank_file(0)).write_text("".join(lines), encoding="utf-8")
    manifest = {"command": ["python", "t.py"], "ranks": {"0": {"rank": 0, "autocast": None}}}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_clean_dumps_exit_0_and_a_divergence_exits_1_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = _dump(tmp_path / "a", run(CLEAN))
    assert main(["compare", str(clean), str(_dump(tmp_path / "b", run(CLEAN)))]) == 0
    assert "no divergence" in capsys.readouterr().out
    perturbed = _dump(tmp_path / "c", run(changed(n=4.4, m=5.5, b1=6.6, out=7.7, loss=0.6)))
    assert main(["compare", "-o", str(tmp_path / "out"), str(clean), str(perturbed)]) == 1
    out = capsys.readouterr().out
    assert "first divergence: blocks.1.norm (step 0, call 0)" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "compare.csv", "compare.html", "compare.xlsx",
    ]  # fmt: skip
    page = (tmp_path / "out" / "compare.html").read_text(encoding="utf-8")
    assert f"<p>A: <code>{clean}: python t.py</code></p>" in page  # the commands compared
    assert f"<p>B: <code>{perturbed}: python t.py</code></p>" in page


def test_a_missing_dump_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = _dump(tmp_path / "a", run(CLEAN))
    assert main(["compare", str(clean), str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ascendify compare: error: ")
    assert f"{tmp_path / 'nothing'}: no such dump folder" in err


def test_dumps_of_different_programs_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = [record(f"features.{i}", 2 * i, 2 * i + 1, (1.0,), 2.0) for i in range(8)]
    code = main(
        ["compare", str(_dump(tmp_path / "a", run(CLEAN))), str(_dump(tmp_path / "b", other))]
    )
    assert code == 2
    assert "dumps of different programs" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--"], "nothing to run"),
        (["--modules", "(", "--", "python", "t.py"], "--modules '('"),
        (["--steps", "-1", "--", "python", "t.py"], "--steps -1"),
    ],
)
def test_a_dump_with_bad_options_exits_2_before_running_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    assert main(["compare", "dump", "-o", str(tmp_path / "d"), *arguments]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_a_dump_refuses_a_folder_that_holds_something(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "old.txt").write_text("kept", encoding="utf-8")
    assert main(["compare", "dump", "-o", str(tmp_path), "--", "python", "t.py"]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert (tmp_path / "old.txt").read_text(encoding="utf-8") == "kept"


def _with_manifest(folder: Path, manifest_text: str) -> Path:
    (folder / MANIFEST).write_text(manifest_text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"ranks": {"abc": {}}}', "'abc' is not a rank number"),
        ('{"ranks": {"99999999999999999999": {}}}', "is not a rank number"),
        ('{"ranks": {"-1": {}}}', "'-1' is not a rank number"),
        ('{"ranks": {"0": 7}}', "rank 0's header is not an object"),
        ('{"ranks": [0]}', "records no rank"),
        ("{not json", "not JSON"),
    ],
)
def test_a_malformed_manifest_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    clean = _dump(tmp_path / "a", run(CLEAN))
    broken = _with_manifest(_dump(tmp_path / "b", run(CLEAN)), damage)
    assert main(["compare", str(clean), str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ascendify compare: error: ")
    assert message in err


def test_a_record_nested_100000_levels_deep_exits_2_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = _dump(tmp_path / "a", run(CLEAN))
    broken = _dump(tmp_path / "b", run(CLEAN))
    with (broken / rank_file(0)).open("a", encoding="utf-8") as lines:
        lines.write('{"s": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert main(["compare", str(clean), str(broken)]) == 2
    assert "rank0.jsonl" in capsys.readouterr().err
