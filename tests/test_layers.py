"""Migration and analysis both stand on ``ascendify.source`` and never on each other."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


@pytest.mark.slow
def test_analysis_loads_no_migration() -> None:
    loaded = _loaded_after("import ascendify.analyze.static")
    assert "ascendify.source" in loaded
    assert not {name for name in loaded if name.startswith("ascendify.migrate")}


@pytest.mark.slow
def test_migration_loads_no_analysis() -> None:
    loaded = _loaded_after("import ascendify.migrate; ascendify.migrate.load_rules()")
    assert "ascendify.source" in loaded
    assert not {name for name in loaded if name.startswith("ascendify.analyze")}


@pytest.mark.slow
def test_explain_stands_below_the_launcher_and_the_jobs() -> None:
    loaded = _loaded_after(
        "from ascendify.explain import explain_paths; import ascendify.explain.analysis"
    )
    assert "ascendify.explain.reader" in loaded
    above = ("ascendify.launch", "ascendify.jobs", "ascendify.web", "ascendify.commands")
    assert not {name for name in loaded if name.startswith(above)}
    assert "torch" not in loaded
