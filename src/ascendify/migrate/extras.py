"""What the modes add to a run: their settings from the command line, and the files they put in the result
(the portable helper module, ``run_distributed_npu.sh``, ``ascend_modelarts_function/``,
``ascend_function/``).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from ascendify._fs import make_dir, write_bytes
from ascendify.errors import AscendifyError
from ascendify.migrate._modes import DistributedMode, Modes, Target
from ascendify.migrate._tree import TreeResult
from ascendify.migrate.rulefile import load_rule_file
from ascendify.replace import BY_API, PACKAGE, generated_functions, library_source
from ascendify.targets.portable import HELPER_MODULE

DISTRIBUTED_SCRIPT = "run_distributed_npu.sh"
MODELARTS_PACKAGE = "ascend_modelarts_function"
_MODEL_VARIABLE = re.compile(r"^([A-Za-z_]\w*\.)*[A-Za-z_]\w*$")
_TEMPLATES = "ascendify.migrate.templates"
_REFERENCE = re.compile(rf"\b{PACKAGE}\.(\w+)")
_MODELARTS_FILES = ("__init__.py", "modelarts_path_manager.py", "path_mapping_config.py")


def build_modes(
    source: Path,
    *,
    target: str = Target.NPU.value,
    specify_device: bool = False,
    modelarts: bool = False,
    main: Path | None = None,
    model: str = "model",
    rules_file: Path | None = None,
    replace_unsupported: bool = False,
) -> Modes:
    """Check the mode options against SRC and turn them into :class:`Modes`."""
    distributed = None
    if main is not None:
        distributed = DistributedMode(_main_file(source, main), _model_variable(model))
    if replace_unsupported:
        _check_no_foreign_package(source)
    return Modes(
        target=Target(target),
        specify_device=specify_device,
        modelarts=modelarts,
        distributed=distributed,
        user_rules=() if rules_file is None else load_rule_file(rules_file),
        replace_unsupported=replace_unsupported,
    )


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


def _check_no_foreign_package(source: Path) -> None:
    """-r writes ascend_function/ in the result's folders: a package of the project's own must not be lost.

    One that an earlier ``migrate -r`` generated is fine (its functions are kept).
    """
    for taken in [*source.rglob(PACKAGE), *source.rglob(f"{PACKAGE}.py")]:
        init = taken / "__init__.py" if taken.is_dir() else taken
        if taken.exists() and (
            not init.is_file()
            or generated_functions(init.read_text(encoding="utf-8", errors="replace")) is None
        ):
            raise AscendifyError(
                f"-r writes {PACKAGE}/ into the result, but {taken} is the project's own: "
                "rename it, or migrate without -r"
            )


def _model_variable(model: str) -> str:
    if not _MODEL_VARIABLE.match(model):
        raise AscendifyError(
            f"distributed -t {model!r}: give the model variable as a name or attribute, "
            "e.g. model or self.model"
        )
    return model


def extra_names(modes: Modes) -> set[str]:
    """The names :func:`write_extras` may write at the top of the result directory."""
    names = set()
    if modes.target is Target.PORTABLE:
        names.add(f"{HELPER_MODULE}.py")
    if modes.distributed is not None:
        names.add(DISTRIBUTED_SCRIPT)
    if modes.modelarts:
        names.add(MODELARTS_PACKAGE)
    return names


def write_extras(modes: Modes, result: TreeResult) -> list[str]:
    """Write what the modes add to the result directory; returns the names written (for the log)."""
    directory = result.result_dir
    if directory is None:
        return []
    written = []
    if modes.target is Target.PORTABLE:
        for folder in importing_folders(directory, result, HELPER_MODULE):
            helper = directory / folder / f"{HELPER_MODULE}.py"
            _copy_template(f"{HELPER_MODULE}.py.txt", helper, directory)
            written.append((folder / f"{HELPER_MODULE}.py").as_posix())
    if modes.distributed is not None:
        script = distributed_script(modes.distributed.main).encode()
        write_bytes(directory / DISTRIBUTED_SCRIPT, script, directory, 0o750)
        written.append(DISTRIBUTED_SCRIPT)
    if modes.modelarts:
        package = directory / MODELARTS_PACKAGE
        make_dir(package, directory)
        for name in _MODELARTS_FILES:
            _copy_template(f"{MODELARTS_PACKAGE}/{name}.txt", package / name, directory)
        written.append(f"{MODELARTS_PACKAGE}/")
    if modes.replace_unsupported:
        written.extend(_write_replacements(result, directory))
    return written


def _write_replacements(result: TreeResult, directory: Path) -> list[str]:
    """Write ``ascend_function/`` wherever a migrated file imports it (see :func:`importing_folders`)."""
    used = _replacements_used(result, directory)
    if not used:
        return []
    written = []
    for folder in importing_folders(directory, result, PACKAGE):
        init = directory / folder / PACKAGE / "__init__.py"
        make_dir(init.parent, directory)  # a link of that name mirrored from SRC is refused
        functions = set(used)
        if init.is_file():  # generated by an earlier run (build_modes checked): keep its functions
            functions |= generated_functions(init.read_text(encoding="utf-8")) or set()
        write_bytes(init, library_source(functions).encode(), directory)
        written.append(f"{(folder / PACKAGE).as_posix()}/ ({', '.join(sorted(functions))})")
    return written


def importing_folders(directory: Path, result: TreeResult, module: str) -> list[Path]:
    """Where a module the migration adds goes: beside every result file that imports it, and in
    every folder above those up to the result root.

    Python finds ``import portable_device`` in the folder of the script it started (``python
    codes/run.py``, ``cd gan && python gan.py``) or in a folder on ``sys.path`` above an imported
    package's module, so a copy in each of those folders serves the script however it is started.
    """
    importing = re.compile(rf"^[ \t]*import {module}\b", re.MULTILINE)
    folders: set[Path] = set()
    for outcome in result.with_status("changed"):
        relative = Path(outcome.path)
        if importing.search((directory / relative).read_text(encoding="utf-8", errors="replace")):
            folders.update(relative.parents)
    return sorted(folders)


def _replacements_used(result: TreeResult, directory: Path) -> set[str]:
    """The ascend_function names the migrated files call: those the changed files now refer to."""
    names = {entry.function for entry in BY_API.values()}
    used: set[str] = set()
    for outcome in result.with_status("changed"):
        text = (directory / outcome.path).read_text(encoding="utf-8", errors="replace")
        used.update(name for name in _REFERENCE.findall(text) if name in names)
    return used


def _copy_template(name: str, destination: Path, root: Path) -> None:
    write_bytes(destination, resources.files(_TEMPLATES).joinpath(name).read_bytes(), root)


def distributed_script(main: str) -> str:
    """A launcher for every card of this host: ``ascendify run`` when installed, else a plain loop."""
    return f"""#!/usr/bin/env bash
# Starts {main} once per device of this host (generated by ascendify migrate distributed).
# Usage: ./{DISTRIBUTED_SCRIPT} [ARGS...]   ARGS go to {main}.
# NPUS=N sets the number of processes (default: the NPUs of this host, else 1); PYTHON picks
# the interpreter. Each rank writes output_npu_<rank>.log next to this script.
set -u
cd "$(dirname "$0")" || exit 2
MAIN={_shell_quote(main)}
PYTHON="${{PYTHON:-python3}}"
if [ -z "${{NPUS:-}}" ]; then
    NPUS=$(ls -1d /dev/davinci[0-9]* 2>/dev/null | wc -l)
    [ "$NPUS" -gt 0 ] || NPUS=1
fi
export PYTHONPATH="$PWD${{PYTHONPATH:+:$PYTHONPATH}}"

if command -v ascendify >/dev/null 2>&1; then
    exec ascendify run --nproc-per-node "$NPUS" "$PYTHON" "$MAIN" "$@"
fi

export MASTER_ADDR="${{MASTER_ADDR:-127.0.0.1}}"
export MASTER_PORT="${{MASTER_PORT:-29688}}"
export HCCL_WHITELIST_DISABLE=1
export RANK_SIZE="$NPUS" WORLD_SIZE="$NPUS" LOCAL_WORLD_SIZE="$NPUS"
pids=()
for ((rank = 0; rank < NPUS; rank++)); do
    echo "starting rank $rank: $PYTHON $MAIN $*"
    RANK_ID=$rank DEVICE_ID=$rank ASCEND_DEVICE_ID=$rank RANK=$rank LOCAL_RANK=$rank \\
        "$PYTHON" "$MAIN" "$@" >"output_npu_$rank.log" 2>&1 &
    pids+=("$!")
done
status=0
for ((done_ranks = 0; done_ranks < NPUS; done_ranks++)); do
    if ! wait -n; then
        status=1
        break
    fi
done
if [ "$status" -ne 0 ]; then
    echo "a rank failed; stopping the others (see output_npu_*.log)" >&2
    kill "${{pids[@]}}" 2>/dev/null
    wait
fi
exit "$status"
"""


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
