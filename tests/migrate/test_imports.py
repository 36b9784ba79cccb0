"""The one import inserter: a module counts as imported only where the inserted code can use it."""

from __future__ import annotations

from ascendify.migrate import Changed, Modes, Settings, migrate_source
from ascendify.migrate._modes import DistributedMode, RenameFunction


def migrated(source: str, modes: Modes) -> str:
    result = migrate_source(source.encode(), Settings(modes=modes), "train.py")
    assert isinstance(result, Changed), result
    return result.data.decode()


def test_a_module_bound_under_another_name_is_imported_for_code_that_names_it() -> None:
    rename = RenameFunction("torch.cuda.synchronize", "mylib.sync", "rules.toml:1")
    source = "import torch\nimport mylib as ml\n\ntorch.cuda.synchronize()\n"
    output = migrated(source, Modes(user_rules=(rename,)))
    assert "\nimport mylib\n" in output
    assert "\nmylib.sync()\n" in output


def test_an_import_inside_a_function_does_not_serve_the_prelude() -> None:
    source = "import torch\n\n\ndef paths():\n    import os\n\n    return os.sep\n"
    output = migrated(source, Modes(distributed=DistributedMode("train.py")))
    prelude = output.split("RANK_ID = ")[0]
    assert "\nimport os\n" in prelude
