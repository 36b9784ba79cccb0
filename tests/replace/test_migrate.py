"""``ascendify migrate -sim`` on a project that calls several APIs without NPU kernels.

The result imports only ``ascend_function`` functions that exist, runs on this CPU (``--target
portable``) and prints the results of the original; every replaced call is in change_list.csv; without
``-sim`` nothing is replaced; ``-v`` decides what is replaced.
"""

from __future__ import annotations

import ast
import csv
import io
import math
import re
from pathlib import Path

import pytest
from rich.console import Console

from ascendify.errors import AscendifyError
from ascendify.migrate import Options, Settings, run_migration
from ascendify.migrate.extras import build_modes
from ascendify.replace import BY_API, PACKAGE, generated_functions
from tests.conftest import RunCli
from tests.migrate_modes.test_portable_runs import IMPORTS_ASCENDIFY, run_python

PROJECT = Path(__file__).resolve().parent / "projects" / "stats"
# (file, line, rule) of every call the 2.13.0 data says the NPU cannot run.
REPLACED = [
    ("models/prior.py", 7, "RPL001"),  # MultivariateNormal
    ("models/prior.py", 14, "RPL001"),  # torch.det
    ("train.py", 21, "RPL001"),  # torch.inverse
    ("train.py", 22, "RPL001"),  # torch.linalg.slogdet
    ("train.py", 23, "RPL001"),  # torch.linalg.solve
    ("train.py", 24, "RPL002"),  # torch.linalg.eigvalsh
    ("train.py", 25, "RPL001"),  # torch.logcumsumexp
    ("train.py", 26, "RPL002"),  # dist.Beta
    ("train.py", 27, "RPL002"),  # torch.poisson
    ("train.py", 28, "RPL001"),  # torch.lgamma
    ("train.py", 29, "RPL002"),  # torch.mode
    ("train.py", 30, "RPL002"),  # F.fractional_max_pool2d
]
CHOLESKY = ("train.py", 31, "RPL001")  # torch_npu 2.13 has a linalg_cholesky kernel, 2.8 has not


def migrate(
    tmp_path: Path, *, replace: bool = True, version: str = "2.13.0", target: str = "npu"
) -> Path:
    out = tmp_path / f"out-{version}-{target}-{replace}"
    modes = build_modes(PROJECT, target=target, switches={"replace"} if replace else ())
    options = Options(
        source=PROJECT,
        output=out,
        settings=Settings(torch_npu_version=version, modes=modes),
    )
    quiet = Console(file=io.StringIO())
    assert run_migration(options, quiet, quiet) == 0
    return out / "stats_msft"


def replaced_rows(result: Path) -> list[tuple[str, int, str]]:
    with (result / "change_list.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    return sorted(
        (row["File"], int(row["Start Line"]), row["Rule"])
        for row in rows
        if row["Rule"] in ("RPL001", "RPL002")
    )


def referenced_functions(result: Path) -> set[str]:
    names = set()
    for path in result.rglob("*.py"):
        if PACKAGE not in path.parts:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == PACKAGE
                ):
                    names.add(node.attr)
    return names


def test_every_replaced_call_is_in_the_change_list(tmp_path: Path) -> None:
    result = migrate(tmp_path)
    assert replaced_rows(result) == REPLACED
    with (result / "change_list.csv").open(newline="", encoding="utf-8") as file:
        rows = [row for row in csv.DictReader(file) if row["Rule"].startswith("RPL00")]
    assert {row["Safety"] for row in rows if row["Rule"] != "RPL003"} == {"unsafe"}
    kinds = {row["Rule"]: re.search(r"\[(exact|fallback)\]", row["Message"]) for row in rows}
    assert [kinds[rule][1] if kinds[rule] else None for rule in ("RPL001", "RPL002")] == [
        "exact",
        "fallback",
    ]
    assert sorted(row["File"] for row in rows if row["Rule"] == "RPL003") == [
        "models/prior.py",
        "train.py",
    ]


def test_the_result_holds_exactly_the_functions_it_calls(tmp_path: Path) -> None:
    result = migrate(tmp_path)
    package = (result / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    module = ast.parse(package)
    exported = next(
        ast.literal_eval(node.value)
        for node in module.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__all__"
    )
    used = referenced_functions(result)
    assert used == set(exported)
    assert len(used) == len(REPLACED)
    defined = {
        node.name for node in module.body if isinstance(node, ast.FunctionDef | ast.ClassDef)
    }
    assert used <= defined
    assert not IMPORTS_ASCENDIFY.search(package)
    public = {name for name in defined if not name.startswith("_")}
    assert public - used == {"linalg_cholesky"}  # only what MultivariateNormal factors with


def test_without_r_nothing_is_replaced(tmp_path: Path) -> None:
    result = migrate(tmp_path, replace=False)
    assert replaced_rows(result) == []
    assert not (result / PACKAGE).exists()
    assert referenced_functions(result) == set()
    assert "precision = torch.inverse(cov)" in (result / "train.py").read_text(encoding="utf-8")


def test_the_version_decides_what_is_replaced(tmp_path: Path) -> None:
    assert replaced_rows(migrate(tmp_path, version="2.13.0")) == REPLACED
    older = migrate(tmp_path, version="2.8.0")
    assert replaced_rows(older) == sorted([*REPLACED, CHOLESKY])
    assert "linalg_cholesky" in referenced_functions(older)


def assert_same_results(ours: dict[str, object], theirs: dict[str, object]) -> None:
    """Exact composites within the catalogue's widest stated tolerance; fallbacks bitwise."""
    tolerance = max(entry.rtol for entry in BY_API.values())
    bitwise = {"mixing", "counts", "votes", "pooled", "eigenvalues"}  # fallbacks
    assert ours.keys() == theirs.keys()
    for key, value in ours.items():
        mine, original = _flat(value), _flat(theirs[key])
        assert len(mine) == len(original), key
        for a, b in zip(mine, original, strict=True):
            if key in bitwise:
                assert a == b, key
            else:
                assert math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance), (key, a, b)


def _flat(value: object) -> list[float]:
    if isinstance(value, list):
        return [item for element in value for item in _flat(element)]
    assert isinstance(value, int | float)
    return [float(value)]


@pytest.mark.slow
@pytest.mark.parametrize("replace", [True, False], ids=["-sim", "without -sim"])
def test_migrated_portable_project_prints_what_the_original_prints(
    tmp_path: Path, run_cli: RunCli, replace: bool
) -> None:
    out = tmp_path / "out"
    args = ["migrate", "-i", str(PROJECT), "-o", str(out), "--target", "portable", "--no-analysis"]
    done = run_cli([*args, "-sim"] if replace else args)
    assert done.returncode == 0, done.stderr
    result = out / "stats_msft"
    assert (result / PACKAGE).is_dir() == replace
    original = run_python(["train.py"], PROJECT)
    migrated = run_python(["train.py"], result)  # a child that cannot import ascendify
    assert_same_results(migrated, original)


@pytest.mark.parametrize("folder", [".", "sub"])
def test_a_package_of_the_project_named_ascend_function_is_not_overwritten(
    tmp_path: Path, folder: str
) -> None:
    source = tmp_path / "project"
    (source / folder / PACKAGE).mkdir(parents=True)
    (source / folder / PACKAGE / "__init__.py").write_text("def helper():\n    return 1\n")
    (source / "train.py").write_text("import torch\nx = torch.lgamma(torch.ones(2))\n")
    with pytest.raises(
        AscendifyError, match="is the project's own: rename it, or migrate without -sim"
    ):
        build_modes(source, switches={"replace"})
    assert not build_modes(source).switches  # without -sim it is just a package


def test_migrating_a_result_again_keeps_its_functions_and_adds_new_ones(tmp_path: Path) -> None:
    first = migrate(tmp_path)
    again = tmp_path / "again"
    modes = build_modes(first, switches={"replace"})
    settings = Settings(torch_npu_version="2.8.0", modes=modes)
    quiet = Console(file=io.StringIO())
    options = Options(source=first, output=again, settings=settings)
    assert run_migration(options, quiet, quiet) == 0
    result = again / "stats_msft_msft"
    # Everything else was replaced already; the result's train.py has two more import lines.
    assert replaced_rows(result) == [("train.py", CHOLESKY[1] + 2, "RPL001")]
    package = (result / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    assert generated_functions(package) == referenced_functions(result)
    assert "linalg_cholesky" in referenced_functions(result)


@pytest.mark.slow
def test_a_script_in_a_sub_folder_finds_ascend_function_however_it_is_started(
    tmp_path: Path, run_cli: RunCli
) -> None:
    source = tmp_path / "project"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "run.py").write_text(
        "import json\nimport torch\n"
        "x = torch.tensor([0.5, 1.5, 4.0], dtype=torch.float64)\n"
        'print(json.dumps({"lgamma": torch.lgamma(x).tolist()}))\n'
    )
    out = tmp_path / "out"
    args = ["migrate", "-i", str(source), "-o", str(out), "--target", "portable", "-sim"]
    done = run_cli([*args, "--no-analysis"])
    assert done.returncode == 0, done.stderr
    result = out / "project_msft"
    packages = sorted(path.parent.relative_to(result) for path in result.rglob("__init__.py"))
    assert packages == [Path(PACKAGE), Path("sub") / PACKAGE]
    assert "ascend_function.lgamma(x)" in (result / "sub" / "run.py").read_text(encoding="utf-8")
    original = run_python(["run.py"], source / "sub")
    assert_same_results(run_python(["sub/run.py"], result), original)  # an exact composite
    assert_same_results(run_python(["run.py"], result / "sub"), original)
