"""``-m/--modelarts``: file paths go through the generated ModelArts path manager.

``open(path)`` becomes ``open(ModelArtsPathManager().get_path(path))``: the manager (copied into the
result as ``ascend_modelarts_function/``) downloads mapped inputs from object storage before their
first use and uploads mapped outputs when the process exits. Without a mapping it returns the path
unchanged.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ascendify._fs import make_dir
from ascendify.migrate._imports import Import, Insertion
from ascendify.migrate._modes import EVERY_TARGET, Modes
from ascendify.migrate._rule import (
    Context,
    Extras,
    Finding,
    Mode,
    Operation,
    Rule,
    Switch,
    checks,
    finishes,
)
from ascendify.migrate._tree import TreeResult
from ascendify.migrate.extras import copy_template
from ascendify.targets import Safety

_MANAGER = "ModelArtsPathManager"
_WRAP = f"{_MANAGER}().get_path"
PACKAGE = "ascend_modelarts_function"
_PACKAGE_FILES = ("__init__.py", "modelarts_path_manager.py", "path_mapping_config.py")


def _write_package(modes: Modes, result: TreeResult, directory: Path) -> list[str]:
    """Copy the path manager package to the top of the result (the migrated files import it)."""
    package = directory / PACKAGE
    make_dir(package, directory)
    for name in _PACKAGE_FILES:
        copy_template(f"{PACKAGE}/{name}", package / name, directory)
    return [f"{PACKAGE}/"]


MODELARTS = Mode(
    "modelarts",
    rank=4,
    visits_everything=True,
    switch=Switch(
        ("-m", "--modelarts"),
        "route file paths through ascend_modelarts_function (object-storage mapping)",
    ),
    extras=Extras(reserves=frozenset({PACKAGE}), write=_write_package),
)


class ModelArtsRule(Rule):
    """Base of the rules of ``-m/--modelarts``."""

    mode = MODELARTS
    targets = EVERY_TARGET


@dataclass(frozen=True)
class PathParameter:
    callable: str  # qualified name ("builtins.open" for the builtin)
    position: int | None
    keyword: str | None


def _p(callable_: str, position: int | None = 0, keyword: str | None = None) -> PathParameter:
    return PathParameter(callable_, position, keyword)


# File APIs and where they take a path (the CANN converter's list, with keywords where they exist).
PATH_PARAMETERS: tuple[PathParameter, ...] = (
    _p("builtins.open", 0, "file"),
    _p("io.open", 0, "file"),
    _p("codecs.open", 0, "filename"),
    _p("os.listdir", 0, "path"),
    _p("os.mkdir", 0, "path"),
    _p("os.makedirs", 0, "name"),
    _p("os.remove", 0, "path"),
    _p("os.walk", 0, "top"),
    _p("os.path.exists", 0, "path"),
    _p("os.path.isfile", 0, "path"),
    _p("os.path.isdir", 0, "path"),
    _p("os.path.getsize", 0, "filename"),
    _p("shutil.copy", 0, "src"),
    _p("shutil.copy", 1, "dst"),
    _p("shutil.copyfile", 0, "src"),
    _p("shutil.copyfile", 1, "dst"),
    _p("shutil.copytree", 0, "src"),
    _p("shutil.copytree", 1, "dst"),
    _p("shutil.move", 0, "src"),
    _p("shutil.move", 1, "dst"),
    _p("shutil.rmtree", 0, "path"),
    _p("glob.glob", 0, "pathname"),
    _p("tarfile.open", 0, "name"),
    _p("zipfile.ZipFile", 0, "file"),
    _p("logging.FileHandler", 0, "filename"),
    _p("pathlib.Path", 0, None),
    _p("torch.load", 0, "f"),
    _p("torch.save", 1, "f"),
    _p("torch.jit.load", 0, "f"),
    _p("torch.jit.save", 1, "f"),
    _p("torch.utils.tensorboard.SummaryWriter", 0, "log_dir"),
    _p("tensorboardX.SummaryWriter", 0, "logdir"),
    _p("numpy.load", 0, "file"),
    _p("numpy.save", 0, "file"),
    _p("numpy.loadtxt", 0, "fname"),
    _p("numpy.savetxt", 0, "fname"),
    _p("numpy.savez", 0, "file"),
    _p("PIL.Image.open", 0, "fp"),
    _p("cv2.imread", 0, "filename"),
    _p("cv2.imwrite", 0, "filename"),
    _p("matplotlib.pyplot.savefig", 0, "fname"),
    _p("matplotlib.pyplot.imsave", 0, "fname"),
    _p("pandas.read_csv", 0, "filepath_or_buffer"),
    _p("pandas.read_json", 0, "path_or_buf"),
    _p("pandas.read_pickle", 0, "filepath_or_buffer"),
    _p("scipy.io.loadmat", 0, "file_name"),
    _p("torchvision.datasets.ImageFolder", 0, "root"),
    _p("torchvision.datasets.MNIST", 0, "root"),
    _p("torchvision.datasets.CIFAR10", 0, "root"),
    _p("torchvision.datasets.CIFAR100", 0, "root"),
)
_BY_NAME: dict[str, list[PathParameter]] = {}
for _parameter in PATH_PARAMETERS:
    _BY_NAME.setdefault(_parameter.callable, []).append(_parameter)


class ModelArtsPath(ModelArtsRule):
    """What it does: wraps the path argument of file APIs (``open``, ``os.makedirs``,
    ``os.path.exists``, ``torch.load``/``torch.save``, ``numpy.load``, ``PIL.Image.open``,
    ``pandas.read_csv``, ``SummaryWriter``, torchvision datasets, ...) in
    ``ModelArtsPathManager().get_path(...)``.

    Why: on ModelArts the data lives in object storage; the manager copies mapped inputs to the
    local path before they are read and uploads mapped outputs at exit
    (``ascend_modelarts_function/path_mapping_config.py`` holds the mapping).

    Example: ``torch.save(state, "out/model.pt")`` becomes
    ``torch.save(state, ModelArtsPathManager().get_path("out/model.pt"))``.

    Fix safety: safe: without a mapping ``get_path`` returns its argument unchanged.
    """

    code = "MDA001"
    name = "modelarts-path"
    summary = "file path -> ModelArtsPathManager().get_path(path)"
    safety = Safety.SAFE


class ImportPathManager(ModelArtsRule):
    """What it does: inserts ``from ascend_modelarts_function import ModelArtsPathManager`` in
    files whose paths were wrapped.

    Why: the wrapped calls need the name.

    Example: the import appears after the file's imports.

    Fix safety: safe.
    """

    code = "MDA002"
    name = "import-path-manager"
    summary = "insert the ModelArtsPathManager import"
    safety = Safety.SAFE
    operation = Operation.INSERT


def _callable_name(ctx: Context, node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id == "open" and "open" not in ctx.names.bindings:
        return "builtins.open"
    return ctx.names.qualified_name(func)


@checks(ast.Call, rules=(ModelArtsPath,))
def check_path(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    name = _callable_name(ctx, node)
    for parameter in _BY_NAME.get(name or "", ()):
        argument = _path_argument(node, parameter)
        if argument is None or _is_wrapped(argument) or _opens_a_file(ctx, argument):
            continue
        text = f"{_WRAP}({ctx.segment(argument)})"
        yield ModelArtsPath.finding(
            argument, f"{name} path -> {_WRAP}(...)", ctx.replace(argument, text)
        )


def _path_argument(node: ast.Call, parameter: PathParameter) -> ast.expr | None:
    argument = next(
        (k.value for k in node.keywords if parameter.keyword and k.arg == parameter.keyword), None
    )
    position = parameter.position
    if (
        argument is None
        and position is not None
        and position < len(node.args)
        and not any(isinstance(arg, ast.Starred) for arg in node.args[: position + 1])
    ):
        argument = node.args[position]
    return argument


def _opens_a_file(ctx: Context, node: ast.expr) -> bool:
    """``torch.save(state, open(path, "wb"))``: the argument is a file; its own path is wrapped."""
    return isinstance(node, ast.Call) and _callable_name(ctx, node) in _BY_NAME


def _is_wrapped(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_path"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == _MANAGER
    )


@finishes(rules=(ImportPathManager,))
def insert_import(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    if any(f.rule is ModelArtsPath and f.edit is not None for f in findings):
        yield Insertion(ImportPathManager, (Import(PACKAGE, _MANAGER),))
