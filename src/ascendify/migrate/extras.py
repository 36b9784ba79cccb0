"""What the modes add to a run: their settings from the command line, and the files they put in the result
(each mode's :class:`ascendify.migrate.Extras`: the portable helper module, ``run_distributed_npu.sh``,
``ascend_modelarts_function/``, ``ascend_function/``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

from ascendify._fs import write_bytes
from ascendify.errors import AscendifyError
from ascendify.migrate._modes import DistributedMode, Modes, Target
from ascendify.migrate._registry import iter_modes, switch_modes
from ascendify.migrate._rule import Mode
from ascendify.migrate._tree import TreeResult
from ascendify.migrate.modes.tune import tune_codes
from ascendify.migrate.rulefile import load_rule_file

_MODEL_VARIABLE = re.compile(r"^([A-Za-z_]\w*\.)*[A-Za-z_]\w*$")
_TEMPLATES = "ascendify.migrate.templates"


def build_modes(
    source: Path,
    *,
    target: str = Target.NPU.value,
    switches: Iterable[str] = (),
    main: Path | None = None,
    model: str = "model",
    rules_file: Path | None = None,
    allow_builtin_rules: bool = False,
    tune: str | None = None,
) -> Modes:
    """Check the mode options against SRC and turn them into :class:`Modes`; ``switches`` names the
    on/off modes switched on; ``allow_builtin_rules``: accept rules on builtins and a name renamed
    twice (:func:`~ascendify.migrate.rulefile.load_rule_file`)."""
    distributed = None
    if main is not None:
        distributed = DistributedMode(_main_file(source, main), _model_variable(model))
    unknown = set(switches) - {mode.name for mode in switch_modes()}
    if unknown:
        raise AscendifyError(f"no on/off mode is called {', '.join(sorted(unknown))}")
    modes = Modes(
        target=Target(target),
        distributed=distributed,
        user_rules=(
            ()
            if rules_file is None
            else load_rule_file(rules_file, allow_builtins=allow_builtin_rules)
        ),
        switches=frozenset(switches),
        tune=frozenset() if tune is None else tune_codes(tune),
    )
    for mode in _modes_on(modes):
        if mode.extras.check is not None:
            mode.extras.check(source)
    return modes


def _main_file(source: Path, main: Path) -> str:
    root = source.resolve()
    path = (main if main.is_absolute() else root / main).resolve()
    if not path.is_file() and not main.is_absolute() and main.resolve().is_file():
        path = main.resolve()  # also accept a path given relative to the working directory
    if root not in path.parents:
        raise AscendifyError(f"distributed -m {main}: the main file must be inside {source}")
    if not path.is_file() or path.suffix != ".py":
        raise AscendifyError(f"distributed -m {main}: not a Python file in {source}")
    return path.relative_to(root).as_posix()


def _model_variable(model: str) -> str:
    if not _MODEL_VARIABLE.match(model):
        raise AscendifyError(
            f"distributed -t {model!r}: give the model variable as a name or attribute, "
            "e.g. model or self.model"
        )
    return model


def _modes_on(modes: Modes) -> list[Mode]:
    return [mode for mode in iter_modes() if mode.on(modes)]


def extra_names(modes: Modes) -> set[str]:
    """The names :func:`write_extras` may write at the top of the result directory."""
    return {name for mode in _modes_on(modes) for name in mode.extras.reserves}


def write_extras(modes: Modes, result: TreeResult) -> list[str]:
    """Write what the modes add to the result directory; returns the names written (for the log)."""
    directory = result.result_dir
    if directory is None:
        return []
    written = []
    for mode in _modes_on(modes):
        if mode.extras.write is not None:
            written.extend(mode.extras.write(modes, result, directory))
    return written


def importing_folders(directory: Path, result: TreeResult, module: str) -> list[Path]:
    """Where a module the migration adds goes: beside every result file that imports it, and in
    every folder above those up to the result root.

    Python finds ``import portable_device`` in the folder of the script it started (``python
    codes/run.py``, ``cd gan && python gan.py``) or in a folder on ``sys.path`` above an imported
    package's module, so a copy in each of those folders serves the script however it is started.

    Files left unchanged count too: migrated again, a result that imports the module already is
    copied as it is, and still needs it.
    """
    importing = re.compile(rf"^[ \t]*import {module}\b", re.MULTILINE)
    folders: set[Path] = set()
    for outcome in result.files:
        relative = Path(outcome.path)
        if outcome.status == "not copied" or relative.parent in folders:
            continue
        if importing.search((directory / relative).read_text(encoding="utf-8", errors="replace")):
            folders.update(relative.parents)
    return sorted(folders)


def copy_template(name: str, destination: Path, root: Path) -> None:
    """Write a file of :mod:`ascendify.migrate.templates` (``name`` without its ``.txt``) into the result."""
    write_bytes(destination, template_bytes(name), root)


def template_bytes(name: str) -> bytes:
    """A file of :mod:`ascendify.migrate.templates` (``name`` without its ``.txt``)."""
    return resources.files(_TEMPLATES).joinpath(f"{name}.txt").read_bytes()


def refuse_projects_own(
    source: Path, names: Iterable[str], flag: str, written: str, generated: Callable[[Path], bool]
) -> None:
    """The run writes ``written`` beside migrated files: an entry of SRC with one of ``names``
    (anywhere, a link too, even a dangling one) must be one an earlier run generated, or it would
    be replaced unseen (or, a link, fail the run half-way)."""
    wanted = set(names)
    for directory, dirnames, filenames in os.walk(source):
        for name in sorted(wanted.intersection(dirnames + filenames)):
            taken = Path(directory) / name
            if taken.is_symlink() or not generated(taken):
                raise AscendifyError(
                    f"{flag} writes {written} into the result, but {taken} is the project's own: "
                    f"rename it, or migrate without {flag}"
                )
