"""The streaming trace reader gives what json.load gives, in small chunks, and names bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendify.perf.stream import TraceError, TraceReader
from tests.perf.synthetic import PlannedStep, write_kineto

STEPS = [
    PlannedStep(idle=100, computing=500 + 7 * n, communication=300, overlap=50) for n in range(40)
]


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_events_and_header_match_json_load_whatever_the_chunk(tmp_path: Path, chunk: int) -> None:
    path = write_kineto(tmp_path / "t.json", 3, STEPS)
    expected = json.loads(path.read_text())
    reader = TraceReader(path, chunk_characters=chunk)
    assert list(reader.events()) == expected["traceEvents"]
    assert reader.header == {k: v for k, v in expected.items() if k != "traceEvents"}


def test_a_bare_array_with_string_time_stamps_is_read(tmp_path: Path) -> None:
    events = [{"ph": "X", "name": "Computing", "ts": "1726054679554437.8", "dur": "12.5"}] * 3
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(events))
    assert list(TraceReader(path, chunk_characters=16).events()) == events


def test_a_number_cut_by_the_buffer_end_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [], "baseTimeNanoseconds": 1790857026000000000}')
    reader = TraceReader(path, chunk_characters=5)
    assert list(reader.events()) == []
    assert reader.header["baseTimeNanoseconds"] == 1790857026000000000


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"traceEvents": [{"ph": "X"}, {"ph": "X", "na', "ends early"),
        ('{"traceEvents": [{"ph": "X"} {"ph": "X"}]}', "expected ',' or ']'"),
        ("<html>", "does not start"),
        ('{"traceEvents": []} trailing', "text follows"),
        ('{"traceEvents": [{"ph": NaX}]}', "Expecting value"),
    ],
)
def test_broken_traces_raise_one_line_naming_the_file(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(TraceError, match=reason) as raised:
        list(TraceReader(path, chunk_characters=8).events())
    assert str(path) in str(raised.value)
    assert "\n" not in str(raised.value)


def test_gzip_traces_are_read_and_a_cut_archive_is_named(tmp_path: Path) -> None:
    import gzip

    plain = write_kineto(tmp_path / "t.json", 1, STEPS)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert list(TraceReader(packed).events()) == json.loads(plain.read_text())["traceEvents"]
    packed.write_bytes(packed.read_bytes()[:300])
    with pytest.raises(
        TraceError, match=r"t\.json\.gz: not a readable trace .*(unpacked|ends early)"
    ):
        list(TraceReader(packed).events())
