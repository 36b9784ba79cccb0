"""The ``--target portable`` mode: the generated helper module written beside the files that
import it (and refused over a module of the project's own of that name), and the base of its rules."""

from __future__ import annotations

from pathlib import Path

from ascendify.errors import AscendifyError
from ascendify.migrate._modes import EVERY_TARGET, Modes, Target
from ascendify.migrate._rule import Extras, Mode, Rule
from ascendify.migrate._tree import TreeResult
from ascendify.migrate.extras import (
    copy_template,
    importing_folders,
    refuse_projects_own,
    template_bytes,
)
from ascendify.targets.portable import HELPER_MODULE
from ascendify.textfile import read_text


def _write_helper(modes: Modes, result: TreeResult, directory: Path) -> list[str]:
    """Copy the helper module beside every migrated file that imports it (and into the folders above)."""
    written = []
    for folder in importing_folders(directory, result, HELPER_MODULE):
        helper = folder / f"{HELPER_MODULE}.py"
        copy_template(f"{HELPER_MODULE}.py", directory / helper, directory)
        written.append(helper.as_posix())
    return written


def _check_no_own_helper(source: Path) -> None:
    """The helper is written beside migrated files: a module of the project's own of that name
    must not be replaced (one an earlier portable run generated is)."""
    name = f"{HELPER_MODULE}.py"
    refuse_projects_own(source, (name,), "--target portable", name, _generated_helper)


def _generated_helper(taken: Path) -> bool:
    try:
        text = read_text(taken, HELPER_MODULE)
    except (OSError, AscendifyError):  # not a small regular UTF-8 file: not ours
        return False
    first_line = template_bytes(f"{HELPER_MODULE}.py").decode().partition("\n")[0]
    return text.startswith(first_line)


PORTABLE = Mode(
    "portable",
    rank=1,
    when=lambda modes: modes.target is Target.PORTABLE,
    extras=Extras(
        reserves=frozenset({f"{HELPER_MODULE}.py"}),
        write=_write_helper,
        check=_check_no_own_helper,
    ),
)


class PortableRule(Rule):
    """Base of the rules of ``--target portable`` (the mode itself names the target)."""

    mode = PORTABLE
    targets = EVERY_TARGET
