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
