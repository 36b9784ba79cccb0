"""The byte pre-scan gives the positions and lines a plain search would, however it finds them."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from ascendify.analyze.static import _TRIGGER as analysis_tokens
from ascendify.migrate import Settings
from ascendify.migrate._registry import registry_for
from ascendify.source import Occurrences, Tokens, walk_touching

TESTS = Path(__file__).parent


def _sources() -> list[bytes]:
    """Our test corpus and torch.nn's sources: real code with the tokens in every position."""
    spec = importlib.util.find_spec("torch")
    assert spec is not None
    assert spec.origin is not None
    nn = Path(spec.origin).parent / "nn"
    paths = [*sorted(TESTS.glob("golden/**/*.py")), *sorted(nn.rglob("*.py"))]
    return [path.read_bytes() for path in paths]


SOURCES = _sources()


def _positions(data: bytes, word: bytes) -> list[int]:
    return [match.start() for match in re.finditer(re.escape(word), data)]


def _line_of(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


def _every_position(data: bytes, word: bytes) -> list[int]:
    """Overlapping ones included: a plain search from each next byte."""
    positions, position = [], data.find(word)
    while position != -1:
        positions.append(position)
        position = data.find(word, position + 1)
    return positions


def test_every_token_is_found_where_a_plain_search_finds_it() -> None:
    # The tokens the migration and the analysis look for, many found at the places of a shorter
    # one inside them ("NCCL" in "NCCL_DEBUG", the stem ".to(" of ".to(0"), whichever is asked first.
    tokens = [*registry_for(Settings()).trigger.words, *analysis_tokens.words]
    for data in SOURCES:
        for order in (tokens, tokens[::-1]):
            occurrences = Occurrences(data)
            for word in order:
                assert occurrences.has(word) == (word in data), word
                assert occurrences.of(word) == _every_position(data, word), word


def test_a_dense_anchor_gives_way_to_a_search() -> None:
    Tokens.of([b"cu", b"cu_graph"])
    data = b"cu " * 400 + b"x = cu_graph\n"  # "cu" far more often than once in 128 bytes
    occurrences = Occurrences(data)
    assert occurrences.of(b"cu_graph") == [data.index(b"cu_graph")]


def test_absence_of_the_shorter_token_answers_for_the_longer_one() -> None:
    Tokens.of([b"npu_only", b"npu_only_thing"])
    occurrences = Occurrences(b"import torch\n")
    assert not occurrences.has(b"npu_only")
    assert not occurrences.has(b"npu_only_thing")
    assert occurrences.of(b"npu_only_thing") == []


@pytest.mark.parametrize("name", [b"amp", b"cuda", b"F", b"nn", b"x"])
def test_names_are_whole_words_as_a_regular_expression_sees_them(name: bytes) -> None:
    pattern = re.compile(rb"\b" + re.escape(name) + rb"\b")
    for data in SOURCES:
        expected = [match.start() for match in pattern.finditer(data)]
        assert Occurrences(data).of_name(name) == expected


def test_lines_are_the_distinct_lines_of_every_position() -> None:
    tokens = Tokens.of([b"cuda", b"device", b"self", b"("])
    for data in SOURCES:
        occurrences = Occurrences(data)
        positions = [p for word in tokens.words for p in _positions(data, word)]
        expected = sorted({_line_of(data, position) for position in positions})
        assert tokens.lines(occurrences) == expected


def test_lines_cannot_be_numbered_with_lone_carriage_returns() -> None:
    tokens = Tokens.of([b"cuda"])
    assert tokens.lines(Occurrences(b"a = 1\rb = x.cuda()\n")) is None
    assert tokens.lines(Occurrences(b"a = 1\r\nb = x.cuda()\r\n")) == [2]


@pytest.mark.parametrize(
    "name",
    ["torch.cuda.amp", "torch.cudart", "apex.amp", "torch.backends.cudnn", "os.environ",
     "nvidia-smi.cuda", "x.é_cuda", "cudaé.x", "torch.npu", ".cuda", "pkg..cuda"],
)  # fmt: skip
def test_a_name_holds_a_token_as_the_bytes_of_the_name_do(name: str) -> None:
    tokens = Tokens.of([b"npu", b"nvidia-smi"], words=[b"cuda", b"amp", b"nvidia-smi"])
    assert tokens.in_name(name) == tokens.found_in(Occurrences(name.encode()))


@pytest.mark.parametrize(
    ("source", "word", "in_code"),
    [
        (b"y = x.double()\n", b"double", True),
        (b"y = (x.\n     double())\n", b"double", True),
        (b"y = (x.  # why\n     double())\n", b"double", True),
        (b"y = x.\\\n    double()\n", b"double", True),
        (b"from torch import (  # the compiler\n    compile,\n)\n", b"compile", True),
        (b"from torch import (\n\n    compile)\n", b"compile", True),
        (b"from torch import compile as c\n", b"compile", True),
        (b"if x: import triton\n", b"triton", True),
        (b"from triton import jit\n", b"triton", True),
        (b'os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', b"CUDA_VISIBLE_DEVICES", True),
        (b"model.to(device=rank)\n", b"rank", True),
        (b"model.to(\n    rank)\n", b"rank", True),
        (b"rank", b"rank", True),
        # Prose and definitions: nothing a rule or the analysis can match.
        (b"# double check the result\n", b"double", False),
        (b'"""The local rank of this process."""\n', b"rank", False),
        (b"def compile(self):\n    pass\n", b"compile", False),
        (b"x = 1  # see\ny = recompile or compile_all\n", b"compile", False),
        (b"x = 1  # model.to(device=rank)\n", b"rank", False),
        (b'"""\n>>> model.to(device=rank)\n"""\n', b"rank", False),
    ],
)
def test_a_word_counts_where_code_may_use_it(source: bytes, word: bytes, in_code: bool) -> None:
    assert Occurrences(source).in_code(word) is in_code
    assert Tokens.of(words=[word]).found_in(Occurrences(source)) is in_code


def test_a_word_in_code_is_one_of_its_whole_words() -> None:
    for data in SOURCES:
        occurrences = Occurrences(data)
        for word in (b"cuda", b"double", b"rank", b"compile", b"device"):
            assert not occurrences.in_code(word) or occurrences.of_name(word)


@pytest.mark.parametrize(
    ("source", "token", "used"),
    [
        (b"y = x.is_cuda\n", b"cuda", True),  # inside an attribute's name
        (b"from torch.cuda import amp\n", b"cuda", True),
        (b'os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "x"\n', b"CUDA", True),
        (b"s = 'a#b'; y = x.cuda()\n", b"cuda", True),  # the "#" is a string's
        (b"x = '\xe9cuda'\n", b"cuda", True),  # a UTF-8 letter is part of the identifier
        (b"model.to(0)  # was .to(1)\n", b".to(0", True),
        # Comments, doctests and docstrings' sentences.
        (b"# CUDA kernels are faster\n", b"CUDA", False),
        (b'"""Runs on CUDA devices."""\n', b"CUDA", False),
        (b'"""\n>>> torch.cuda.synchronize()\n"""\n', b"cuda", False),
        (b"x = 1  # model.to(0)\n", b".to(0", False),
        (b"x = 1  # TORCH_DOCTEST_CUDA\n", b"CUDA", False),
    ],
)
def test_a_token_counts_where_code_may_use_it(source: bytes, token: bytes, used: bool) -> None:
    assert Occurrences(source).used(token) is used
    assert Tokens.of([token]).found_in(Occurrences(source)) is used


def _visited(source: str, lines: list[int] | None) -> list[str]:
    """The source text of every expression ``walk_touching`` enters."""
    seen: list[str] = []

    def enter(node: ast.AST, parent: ast.AST | None) -> bool:
        if isinstance(node, ast.expr):
            seen.append(ast.unparse(node))
        return True

    walk_touching(ast.parse(source), lines, enter)
    return seen


def test_the_parts_of_a_statement_on_no_trigger_line_are_skipped() -> None:
    source = "table = {\n    'a': 1,\n    'b': torch.cuda.Stream(),\n    'c': 3,\n}\n"
    visited = _visited(source, [3])
    assert "torch.cuda.Stream()" in visited
    assert not {"'a'", "1", "'c'", "3"} & set(visited)
    assert {"'a'", "1", "'c'", "3"} <= set(_visited(source, None))


def test_every_part_of_an_f_string_on_a_trigger_line_is_entered() -> None:
    source = 'x = 1\nname = f"cuda:{rank}" \\\n    f"{other}"\n'
    assert {"rank", "other"} <= set(_visited(source, [2]))
