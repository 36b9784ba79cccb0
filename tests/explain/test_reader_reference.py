"""The block reader against a plain reading of the whole file, one line at a time: the same
findings (signature, rank, line number, time, text, exception, out-of-memory numbers) in the same
order, whatever the block size, on mixed logs with lines cut by block ends, CRLF line ends, invalid
UTF-8, lines longer than the part kept (anchors before, across and after the cut), lines without
a time stamp (their time is read from the lines around them) and the launcher's time marks."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ascendify.explain import oom, reader, timestamps
from ascendify.explain.catalogue import Catalogue, exception_name, has_anchor, load
from ascendify.explain.reader import Finding
from ascendify.explain.sources import Source, classify
from ascendify.runfolder import times_path

from .test_public_fixtures import CASES

_ORDINARY = [
    "2025-10-11 14:{minute:02d}:{second:02d},123 - INFO - step {n} | loss 2.31 | lr 1.0e-04",
    "step {n} loss 0.5 (no time stamp)",
    "[W1011 14:{minute:02d}:{second:02d}.184 compiler_depend.ts:133] Warning: Device do not "
    "support double dtype now, dtype cast replace with float.",
    "metrics: error_rate 0.{n} (an anchor, no signature)",
    "",
    "[rank {rank}]: ValueError: boom at step {n}",
    "[rank{rank}]:Traceback (most recent call last):",
    "EI0002: [PID: 29] 2025-10-11-15:{minute:02d}:34.713.335 The wait execution of the Notify "
    "register times out. Reason: The Notify register has not received the Notify record from "
    "remote rank: [{rank}].",
]


def _public_lines() -> list[str]:
    return [line for case in CASES for line in case.log.splitlines()]


def _odd_lines(rng: random.Random, limit: int) -> list[bytes]:
    """Lines that test the reader's edges: invalid UTF-8, a character cut by the kept part's end,
    lines longer than the kept part with the anchor before, across or after the cut."""
    anchor = b"RuntimeError: CUDA error: an illegal memory access was encountered"
    filler = b"x" * rng.randrange(limit - 40, 3 * limit)
    return [
        b"\xff\xfe RuntimeError: invalid \xc3 bytes \x80 ERR00100 PTA call acl api failed",
        b"\xe9\xa0 step 3 KeyError: 'labels'",
        b"KeyError: " + "é".encode() * limit,  # a two-byte character cut at the limit
        anchor + b" " + filler,  # the anchor in the kept part
        filler + b" " + anchor,  # the anchor only after the cut
        b"The aicore execution is abnormal " + filler + b" [Error]",  # a phrase, no anchor kept
        b"x" * (limit - 5) + b"EI0002 times out",  # the anchor across the cut
        b"x" * (limit - 6) + b"EI0002" + b"Z" * 10,  # the anchor ends at the cut
        b"[rank 5]: " + anchor + b" " + filler,
    ]


def _log(rng: random.Random, lines: int, limit: int) -> bytes:
    public = _public_lines()
    odd = _odd_lines(rng, limit)
    out: list[bytes] = []
    for n in range(lines):
        pick = rng.random()
        if pick < 0.6:
            text = rng.choice(_ORDINARY).format(
                minute=n // 60 % 60, second=n % 60, n=n, rank=rng.randrange(4)
            )
            line = text.encode()
        elif pick < 0.9:
            line = rng.choice(public).encode()
        else:
            line = rng.choice(odd)
        out.append(line + (b"\r" if rng.random() < 0.2 else b""))
    data = b"\n".join(out)
    return data if rng.random() < 0.5 else data + b"\n"


def reference(source: Source, catalogue: Catalogue) -> list[Finding]:
    """Every line of the whole file in turn: a line whose kept part holds an anchor is decoded and
    matched; its time is the launcher's mark, its own stamp, else the nearest stamp around it."""
    data = source.path.read_bytes()
    marks = timestamps.Marks(times_path(source.path.resolve()))
    year = timestamps.file_year(source.path)
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the file ends with a line end
    found: list[Finding] = []
    start = 0
    for number, raw in enumerate(lines, 1):
        end = start + len(raw)
        head = raw[: reader.LINE_LIMIT]
        if has_anchor(head):
            who, line = reader._who(source, head.decode("utf-8", "replace").rstrip("\r"))
            signature = catalogue.match(line)
            if signature is not None:
                when = marks.at(start)
                marked = when is not None
                if when is None:
                    when = timestamps.line_time(line, year)
                if when is None:
                    when = reader.time_near(data, start, end, year)
                context = ("", "")
                if exception_name(line) is not None:
                    context = reader.message_around(data, start, end)
                found.append(
                    Finding(
                        who=who,
                        signature=signature,
                        path=source.path,
                        line_no=number,
                        time=when,
                        text=line.strip(),
                        exception=exception_name(line) if signature.exception else None,
                        oom=oom.parse(line),
                        marked=marked,
                        fields=reader._fields(signature, line, context),
                    )
                )
        start = end + 1
    return found


def _with_marks(rng: random.Random, log: Path, data: bytes) -> None:
    """The launcher's marks at a few line starts, in the order the bytes arrived."""
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == 10 and rng.random() < 0.05]
    marks = "".join(f"{offset} {1_700_000_000 + i * 0.25}\n" for i, offset in enumerate(starts))
    times_path(log).write_text(marks)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limit", [120, reader.LINE_LIMIT])
def test_the_block_reader_finds_what_a_line_by_line_reading_finds(
    seed: int, limit: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed * 1000 + limit)
    monkeypatch.setattr(reader, "LINE_LIMIT", limit)
    monkeypatch.setattr(reader, "NEAR", rng.choice([64, reader.NEAR]))
    log = tmp_path / f"rank_{seed % 3}.log"
    data = _log(rng, 400 if limit < 1000 else 160, limit)  # long lines: fewer make as many blocks
    log.write_bytes(data)
    if seed % 2:
        _with_marks(rng, log, data)
    source = classify(log)
    assert source is not None
    catalogue = load()
    expected = reference(source, catalogue)
    assert len(expected) > 30
    year = timestamps.file_year(log)
    near = [f for f in expected if not f.marked and timestamps.line_time(f.text, year) is None]
    assert all(f.marked for f in expected) if seed % 2 else near  # times read around a line
    tiny = rng.randrange(7, 64) if limit < 1000 else rng.randrange(500, 1000)  # cut lines often
    for block in (tiny, rng.randrange(1000, 4096), limit + 1, 1 << 20):
        monkeypatch.setattr(reader, "BLOCK", block)
        assert list(reader.scan(source, catalogue)) == expected, block


def test_a_line_is_matched_on_its_kept_part_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "LINE_LIMIT", 100)
    monkeypatch.setattr(reader, "BLOCK", 64)
    lines = [
        b"x" * 120 + b" KeyError: 'labels'",  # the anchor after the cut: not looked at
        b"The aicore execution is abnormal" + b"." * 80 + b"[Error]",  # a phrase, no anchor kept
        b"x" * 96 + b"EI0002 times out",  # the anchor across the cut: not looked at
        b"KeyError: 'labels' " + b"x" * 300,  # kept: matched on its first 100 bytes
        b"2025-10-11 14:00:05 step 7",
        b"\xff RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total",
    ]
    log = tmp_path / "rank_0.log"
    log.write_bytes(b"\r\n".join(lines))
    source = classify(log)
    assert source is not None
    found = list(reader.scan(source, load()))
    assert [(f.line_no, f.signature.id) for f in found] == [(4, "PY-EXCEPTION"), (6, "NPU-OOM")]
    assert found[0].text == "KeyError: 'labels' " + "x" * 81
    assert found[0].time == found[1].time == timestamps.line_time("2025-10-11 14:00:05", 2025)
    assert found[1].text.startswith("\ufffd RuntimeError")
