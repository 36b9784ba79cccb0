"""The node index of a file (ascendify.source.NodeIndex): one walk, and every order and question
the rules used to answer with walks of their own, answered the same way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ascendify.source import CHILD_FIELDS, SCOPES, NodeIndex
from ascendify.source.census import counting

SCRIPTS = Path(__file__).parent / "differential/scripts"
SOURCES = sorted(SCRIPTS.glob("*.py"))

NESTED = """\
import torch

class Model:
    def forward(self, x, device="cuda", f=lambda y=[i for i in range(3)]: y):
        self.device = device
        def inner(z):
            return {k: z for k in range(torch.cuda.device_count())}
        return inner(x) if x else (lambda w: w)(x)

total = sum(n for n in range(4))
"""


def _indexed(index: NodeIndex) -> set[int]:
    return {id(node) for node in index.nodes}


def _stack_walk(module: ast.Module) -> list[ast.AST]:
    """A walk with a stack over the field tables: children pushed in order, the last popped first."""
    stack: list[ast.AST] = [module]
    met = []
    while stack:
        node = stack.pop()
        met.append(node)
        for name in CHILD_FIELDS[type(node)]:
            value = getattr(node, name)
            if type(value) is list:
                stack.extend(child for child in value if isinstance(child, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return met


@pytest.mark.parametrize("path", [*SOURCES, None], ids=lambda path: path and path.name)
def test_the_orders_are_those_of_the_walks_they_replace(path: Path | None) -> None:
    module = ast.parse(path.read_text() if path else NESTED)
    index = NodeIndex(module)
    indexed = _indexed(index)
    every = range(len(index.nodes))
    # ast.walk also meets the operator and context singletons and the aliases, which are not indexed.
    walked = [node for node in ast.walk(module) if id(node) in indexed]
    assert len(walked) == len(index.nodes) > 50
    assert [index.nodes[number] for number in index.walk_order(every)] == walked
    assert [index.nodes[number] for number in index.stack_order(every)] == _stack_walk(module)
    for number in every:
        node = index.nodes[number]
        assert index.number(node) == number
        inside = [inner for inner in ast.walk(node) if id(inner) in indexed]
        assert list(index.subtree(number)) == inside
        assert all(index.inside(index.number(inner), number) for inner in inside)
        assert index.last[number] - number + 1 == len(inside)


def test_depths_holders_and_scopes() -> None:
    module = ast.parse(NESTED)
    index = NodeIndex(module)
    assert index.parents[0] == -1
    assert index.depths[0] == 0
    for number in range(1, len(index.nodes)):
        holder = index.parents[number]
        assert index.depths[number] == index.depths[holder] + 1
        assert index.nodes[number] in set(ast.iter_child_nodes(index.nodes[holder]))
        scope = holder
        while scope > 0 and not isinstance(index.nodes[scope], SCOPES):
            scope = index.parents[scope]
        assert index.scopes[number] == max(scope, 0)
    functions = [index.nodes[number] for number in index.of(*SCOPES)]
    assert [type(node).__name__ for node in functions] == [
        "FunctionDef",  # forward
        "Lambda",  # f's default
        "FunctionDef",  # inner
        "Lambda",  # (lambda w: w)
    ]
    comprehension = index.of(ast.DictComp)[0]
    assert index.nodes[index.scopes[comprehension]].name == "inner"  # type: ignore[attr-defined]
    calls = index.of(ast.Call)
    inner = index.of(ast.FunctionDef)[1]
    called = [ast.unparse(index.nodes[number]) for number in index.within(calls, inner)]
    assert called == ["range(torch.cuda.device_count())", "torch.cuda.device_count()"]


def test_the_index_is_one_walk() -> None:
    module = ast.parse((SCRIPTS / "gpt_trainer.py").read_text())
    with counting() as census:
        index = NodeIndex(module)
        assert census.visits == len(index.nodes)
        index.walk_order(index.of(ast.Call))
        index.stack_order(index.of(ast.For))
        list(index.subtree(index.of(ast.FunctionDef)[0]))
        assert len(index.scopes) == len(index.last) == len(index.nodes)
        assert index.number(module) == 0
        assert census.visits == len(index.nodes)  # everything else is read from the index
