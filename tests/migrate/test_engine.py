"""The pure core: encodings, exact spans, suppression, failures and pruning."""

from __future__ import annotations

import ast
import warnings

import pytest

from ascendify.migrate import (
    Changed,
    Failed,
    Modes,
    Settings,
    Skipped,
    SkipReason,
    Unchanged,
    apply_edits,
    migrate_source,
)
from ascendify.migrate._imports import IMPORT_TORCH_NPU
from ascendify.migrate._registry import registry_for
from ascendify.migrate._rule import Edit

NPU_IMPORT = IMPORT_TORCH_NPU.encode()


def changed(data: bytes, settings: Settings | None = None) -> Changed:
    result = migrate_source(data, settings or Settings())
    assert isinstance(result, Changed), result
    return result


def test_latin1_file_keeps_its_encoding_and_every_untouched_byte() -> None:
    source = (
        b"# -*- coding: latin-1 -*-\n"
        b"import torch\n"
        b'x = "\xe9t\xe9"; y = torch.ones(1).cuda()  # caf\xe9\n'
    )
    result = changed(source)
    assert result.encoding == "iso-8859-1"
    assert result.data == (
        b"# -*- coding: latin-1 -*-\n"
        b"import torch\n" + NPU_IMPORT + b"\n"
        b'x = "\xe9t\xe9"; y = torch.ones(1).npu()  # caf\xe9\n'
    )


def test_utf8_columns_are_bytes_in_ast_and_characters_in_edits() -> None:
    source = 'import torch\nlabel = "ñandú→日本"; t = x.cuda(); d = "cuda"\ndevice = "cuda"\n'
    result = changed(source.encode())
    assert result.data.decode() == (
        f'import torch\n{IMPORT_TORCH_NPU}\nlabel = "ñandú→日本"; t = x.npu(); d = "cuda"\n'
        'device = "npu"\n'
    )


def test_bom_and_crlf_line_endings_survive() -> None:
    source = b"\xef\xbb\xbfimport torch\r\nx = torch.ones(1).cuda()\r\n"
    result = changed(source)
    assert (
        result.data
        == b"\xef\xbb\xbfimport torch\r\n" + NPU_IMPORT + b"\r\nx = torch.ones(1).npu()\r\n"
    )


def test_lone_carriage_returns_still_give_exact_lines() -> None:
    source = b"import torch\rx = 1\ry = torch.ones(1).cuda()\r"
    result = changed(source)
    assert result.data == b"import torch\r" + NPU_IMPORT + b"\rx = 1\ry = torch.ones(1).npu()\r"
    assert [c.start_line for c in result.changes if c.code == "NPU201"] == [3]


def test_line_numbers_are_those_of_the_original_file() -> None:
    source = b"import torch\n\n\nx = (\n    torch.ones(1)\n    .cuda()\n)\n"
    result = changed(source)
    rows = {c.code: (c.start_line, c.end_line) for c in result.changes}
    assert rows["NPU201"] == (5, 6)
    assert rows["NPU001"] == (1, 1)


def test_names_bound_by_a_partly_moved_import_are_found_on_lines_without_cuda() -> None:
    source = b"from torch.cuda import amp, nvtx\n\n\ndef step():\n    with amp.autocast():\n        pass\n"
    result = changed(source)
    assert b"with torch_npu.npu.amp.autocast():" in result.data
    assert NPU_IMPORT + b"\n" in result.data


@pytest.mark.parametrize(
    ("comment", "kept"),
    [
        ("# ascendify: ignore", True),
        ("# ascendify: ignore[NPU201]", True),
        ("# ascendify: ignore[NPU101, NPU201]", True),
        ("# ascendify: ignore[NPU202]", False),
        ("# noqa", False),
    ],
)
def test_suppression_comments(comment: str, kept: bool) -> None:
    source = f"import torch\ny = x.cuda()  {comment}\n".encode()
    result = migrate_source(source, Settings())
    if kept:
        assert isinstance(result, Unchanged)
        assert result.changes == ()
    else:
        assert isinstance(result, Changed)


def test_files_without_a_trigger_token_are_not_parsed() -> None:
    # Broken syntax proves the parser never ran.
    assert migrate_source(b"def broken(:\n", Settings()) == Skipped(SkipReason.NO_TRIGGER)


def test_only_the_tokens_of_the_rules_a_run_applies_get_a_file_parsed() -> None:
    source = b"import torch\nloader = torch.utils.data.DataLoader(data, num_workers=4)\n"
    assert migrate_source(source) == Skipped(SkipReason.NO_TRIGGER)
    tuned = changed(source, Settings(modes=Modes(tune=frozenset({"TUN104"}))))
    assert b"num_workers=4, persistent_workers=True)" in tuned.data


def test_large_files_are_skipped() -> None:
    data = b"x = 'cuda'\n" * 100
    assert migrate_source(data, Settings(max_bytes=50)) == Skipped(SkipReason.TOO_LARGE)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'print "cuda"\n', "does not parse"),
        (b"import torch\ndef f(:\n    x.cuda()\n", "does not parse"),
        (b"# coding: utf-8\nx = '\xffcuda'\n", "cannot decode"),
        (b"# coding: no-such-codec\nx = 'cuda'\n", "cannot decode"),
        (b"x = 'cuda'\x00\n", "does not parse"),
    ],
)
def test_bad_input_fails_cleanly(data: bytes, message: str) -> None:
    result = migrate_source(data, Settings())
    assert isinstance(result, Failed)
    assert message in result.error


def test_report_only_findings_leave_the_file_unchanged() -> None:
    result = migrate_source(
        b"import torch\nwith torch.cuda.nvtx.range('a'):\n    pass\n", Settings()
    )
    assert isinstance(result, Unchanged)
    assert [c.code for c in result.changes] == ["NPU103"]


def test_unknown_torch_cuda_names_are_reported_not_invented() -> None:
    result = migrate_source(b"import torch\ntorch.cuda.no_such_api()\n", Settings())
    assert isinstance(result, Unchanged)
    assert "no counterpart in torch_npu" in result.changes[0].message


def test_older_torch_npu_releases_limit_what_is_emitted() -> None:
    source = b"import torch\ntorch.cuda.set_device(0)\n"
    for version in ("2.1.0", "2.13.0"):
        result = migrate_source(source, Settings(torch_npu_version=version))
        assert isinstance(result, Changed)
        ast.parse(result.data)


def test_overlapping_edits_keep_the_first() -> None:
    text = "abcdef"
    assert apply_edits(text, [Edit(1, 3, "X"), Edit(4, 4, "Y")]) == "aXdYef"


def test_match_statements_are_walked() -> None:
    source = b'import torch\nmatch mode:\n    case "gpu":\n        x = y.cuda()\n    case _:\n        pass\n'
    assert b"x = y.npu()" in changed(source).data


def test_form_feeds_and_unicode_line_separators_do_not_shift_lines() -> None:
    source = 'import torch\n\x0c\ns = "a\u2028b"\nx = y.cuda()\n'.encode()
    result = changed(source)
    assert result.data.decode().endswith('s = "a\u2028b"\nx = y.npu()\n')
    assert [c.start_line for c in result.changes if c.code == "NPU201"] == [4]


def test_parsing_warnings_of_the_user_code_are_not_emitted() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        changed(b'import torch\npattern = "\\d+"\nx = y.cuda()\n')
    assert caught == []


def test_a_failing_rule_fails_only_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_checker(ctx: object, node: object, parent: object) -> list[object]:
        raise RuntimeError("rule bug")

    monkeypatch.setitem(registry_for(Settings()).checkers, ast.Call, [broken_checker])
    result = migrate_source(b"import torch\nx = y.cuda()\n", Settings())
    assert result == Failed("internal error: RuntimeError: rule bug")
