"""The pre-scan is only a shortcut: skipping files and statements without a trigger token (or word)
changes no result, on our corpus and on torch.nn's own sources."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ascendify.migrate import Settings
from ascendify.migrate._engine import FileResult, Skipped, Unchanged, migrate_source
from ascendify.migrate._modes import Modes, Target
from ascendify.source import Occurrences, Tokens

TESTS = Path(__file__).parent.parent


def _sources() -> list[Path]:
    spec = importlib.util.find_spec("torch")
    assert spec is not None
    assert spec.origin is not None
    ours = [*TESTS.glob("golden/**/*.py"), *TESTS.glob("differential/scripts/**/*.py")]
    return [*sorted(ours), *sorted((Path(spec.origin).parent / "nn").rglob("*.py"))]


def _outcome(result: FileResult) -> FileResult | None:
    """None for a file left as it is with nothing to say (skipped unparsed, or walked for nothing)."""
    if isinstance(result, Skipped) or (isinstance(result, Unchanged) and not result.changes):
        return None
    return result


@pytest.mark.slow  # runs long: every rule over the corpus and torch.nn, twice per target
@pytest.mark.parametrize("target", list(Target), ids=str)
def test_pruned_migration_equals_a_full_walk(
    target: Target, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(modes=Modes(target=target))
    files = [(path.read_bytes(), path.name) for path in _sources()]
    pruned = [_outcome(migrate_source(data, settings, name)) for data, name in files]

    def everywhere(self: Tokens, occurrences: Occurrences) -> bool:
        return True

    def every_line(self: Tokens, occurrences: Occurrences, bound: object = ()) -> None:
        return None

    monkeypatch.setattr(Tokens, "found_in", everywhere)
    monkeypatch.setattr(Tokens, "lines", every_line)
    full = [_outcome(migrate_source(data, settings, name)) for data, name in files]
    assert sum(result is not None for result in pruned) > 50  # the corpus does exercise the rules
    for (_, name), shortcut, whole in zip(files, pruned, full, strict=True):
        assert shortcut == whole, name
