"""One parse per file and one walk that every rule shares: counted, not timed.

Fixed trees (the golden project and the differential trainers, GPU scripts dense with CUDA idioms)
are migrated, and analysed, in this process while :func:`ascendify.source.census.counting` counts
every ``ast.parse`` and every node looked inside, file by file. A rule that parses a file again or
walks it on its own (``ast.walk(ctx.module)``, a stack over the field tables) pushes a file past
its bound, whatever the machine's load.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import ascendify.migrate._tree
from ascendify.analyze.static import StaticAnalysis, findings_in_python
from ascendify.migrate import FileOutcome, Options, Settings, migrate_tree, plan_tree
from ascendify.migrate._modes import Modes, Target
from ascendify.source import CHILD_FIELDS, PARSE_ERRORS, decode, walk_touching
from ascendify.source.census import Census, counting
from ascendify.targets import load_facts

TESTS = Path(__file__).parent
TREES = (TESTS / "golden/migrate/projects/gpu_project", TESTS / "differential/scripts")

# Nodes looked inside per node of the file, at most, for either target: the pass over the
# statements, the walk of the lines holding a CUDA idiom, the analysis' walk of the same lines, and
# the one walk that indexes every node for the rules asking about the whole file (data flow, the
# file's own members and functions, its NPU code, the portable target's CUDA checks). Today's worst
# file is at 1.43 (a script of legacy idioms on almost every line); one more walk of the whole file
# takes it past 2.
VISITS_PER_NODE = 2.0
ANALYSIS_VISITS_PER_NODE = 1.0  # the analysis alone: the pass over the statements and its walk


def _texts(tree: Path) -> dict[str, str]:
    """The decoded text of every Python file that parses, by path relative to ``tree``."""
    texts = {}
    for path in sorted(tree.rglob("*.py")):
        try:
            text, _ = decode(path.read_bytes())
            ast.parse(text)
        except PARSE_ERRORS:
            continue
        texts[path.relative_to(tree).as_posix()] = text
    return texts


def _nodes(text: str) -> int:
    return sum(1 for _ in ast.walk(ast.parse(text)))


def _migrated(
    tree: Path, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FileOutcome, int, list[int]]]:
    """Migrate ``tree`` with its analysis, as the command does, in this process: each file's
    outcome with the visits and the parses (their sources' lengths) made for it."""
    per_file: list[tuple[FileOutcome, int, list[int]]] = []
    project_parses: list[int] = []
    with counting() as census:
        marks = [0, 0]  # visits and parses counted before the file

        def after_project_pass(project: Callable[..., object]) -> Callable[..., object]:
            def counted(*args: object) -> object:
                found = project(*args)
                project_parses.extend(census.parsed)
                marks[:] = [census.visits, len(census.parsed)]
                return found

            return counted

        def progress(outcome: FileOutcome) -> None:
            per_file.append((outcome, census.visits - marks[0], census.parsed[marks[1] :]))
            marks[:] = [census.visits, len(census.parsed)]

        monkeypatch.setattr(
            ascendify.migrate._tree,
            "project_names",
            after_project_pass(ascendify.migrate._tree.project_names),
        )
        options = Options(
            source=tree,
            output=tmp_path,
            settings=settings,
            jobs=1,
            companion=StaticAnalysis(settings.torch_npu_version),
        )
        migrate_tree(options, None, plan_tree(tree), progress)
    # The project pass reads the import lines and __all__ of every module, never a whole module.
    texts = _texts(tree)
    assert not set(project_parses) & {len(text) for text in texts.values()}
    assert sum(project_parses) <= sum(len(text) for text in texts.values()) // 10
    return iter(per_file)


@pytest.mark.parametrize("tree", TREES, ids=lambda tree: tree.name)
@pytest.mark.parametrize("target", [Target.NPU, Target.PORTABLE], ids=["npu", "portable"])
def test_a_migration_parses_each_file_once_and_walks_it_once(
    tree: Path, target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _texts(tree)
    settings = Settings(modes=Modes(target=target))
    outcomes = list(_migrated(tree, settings, tmp_path, monkeypatch))
    assert {outcome.status for outcome, _, _ in outcomes} >= {"changed", "skipped"}
    for outcome, visits, parses in outcomes:
        text = texts.get(outcome.path)
        if text is None:  # it does not parse: one attempt, nothing walked
            assert len(parses) <= 1, outcome.path
            assert visits == 0, outcome.path
            continue
        whole = Census(parses).parses_of(len(text))
        # A file without a CUDA idiom is parsed only when the analysis has words to look for.
        assert whole == 1 or (whole == 0 and outcome.status == "skipped"), (
            f"{outcome.path}: parsed {whole} times"
        )
        assert sum(parses) - len(text) <= len(text) // 10, outcome.path
        nodes = _nodes(text)
        assert visits <= VISITS_PER_NODE * nodes, (
            f"{outcome.path}: {visits} visits of {nodes} nodes"
        )


@pytest.mark.parametrize("target", [Target.NPU, Target.PORTABLE], ids=["npu", "portable"])
def test_the_census_of_a_file_is_the_same_in_every_run(
    target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file's parses and visits depend on the file alone, not on what an earlier run of the
    process left cached: the second migration of a tree counts what the first did, file by file."""
    settings = Settings(modes=Modes(target=target))

    def census(run: str) -> list[tuple[str, int, list[int]]]:
        migrated = _migrated(TREES[1], settings, tmp_path / run, monkeypatch)
        return [(outcome.path, visits, parses) for outcome, visits, parses in migrated]

    first = census("first")
    assert any(visits for _, visits, _ in first)
    assert census("second") == first


@pytest.mark.parametrize("tree", TREES, ids=lambda tree: tree.name)
def test_the_analysis_parses_each_file_once_and_walks_it_once(tree: Path) -> None:
    facts = load_facts(None)
    for relative, text in _texts(tree).items():
        with counting() as census:
            findings_in_python((tree / relative).read_bytes(), relative, facts)
        if not census.parsed:
            continue  # no word the analysis looks for
        assert census.parsed == [len(text)], relative
        nodes = _nodes(text)
        assert census.visits <= ANALYSIS_VISITS_PER_NODE * nodes, f"{relative}: {census.visits}"


def test_the_census_counts_a_walk_of_its_own_and_a_second_parse() -> None:
    """What the guard relies on: a rule's own ``ast.walk``, a walk over the field tables and a
    parse of the file all count."""
    text = (TESTS / "differential/scripts/gpt_trainer.py").read_text()
    module = ast.parse(text)
    nodes = _nodes(text)
    with counting() as census:
        list(ast.walk(module))
        assert census.visits == nodes
        walk_touching(module, None, lambda node, parent: True)
        assert nodes // 2 < census.visits - nodes <= nodes  # the field tables skip ctx and ops
        before = census.visits
        assert CHILD_FIELDS[ast.Call]
        assert census.visits == before + 1
        ast.parse(text)
        assert census.parses_of(len(text)) == 1
    ast.parse(text)
    assert census.parses_of(len(text)) == 1  # nothing is counted after the block
