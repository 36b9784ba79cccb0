"""Generate ascendify's torch_npu facts from the real torch-npu wheels.

torch_npu installs from PyPI but cannot be imported without the CANN runtime, so this script reads the
wheel as a zip archive: the ``__all__`` lists of the public modules, every name each module of
``torch_npu.npu`` (and each public module) binds, private ones included (``torch_npu.npu._lazy_call``,
``default_generators``: names CUDA code reaches on ``torch.cuda`` too), and the aten operators that
have an NPU kernel (``csrc/aten/npu_native_functions_by_codegen.yaml``). One JSON file per version is written to
``src/ascendify/targets/data/`` and committed; ascendify never needs the wheel at run time.

Usage::

    python scripts/generate_torch_npu_data.py 2.13.0 2.14.0           # downloads with pip
    python scripts/generate_torch_npu_data.py --wheel torch_npu-2.13.0-...whl
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

OUTPUT_DIR = Path(__file__).resolve().parents[1] / "src" / "ascendify" / "targets" / "data"

# Modules whose public names migration and analysis rely on (dotted name -> path inside the wheel).
PUBLIC_MODULES = {
    "torch_npu": "torch_npu/__init__.py",
    "torch_npu.npu": "torch_npu/npu/__init__.py",
    "torch_npu.npu.amp": "torch_npu/npu/amp/__init__.py",
    "torch_npu.npu.random": "torch_npu/npu/random.py",
    "torch_npu.npu.memory": "torch_npu/npu/memory.py",
    "torch_npu.npu.graphs": "torch_npu/npu/graphs.py",
    "torch_npu.npu.streams": "torch_npu/npu/streams.py",
    "torch_npu.npu.utils": "torch_npu/npu/utils.py",
    "torch_npu.npu.mstx": "torch_npu/npu/mstx.py",
    "torch_npu.npu.backends": "torch_npu/npu/backends.py",
    "torch_npu.npu._sanitizer": "torch_npu/npu/_sanitizer.py",
    "torch_npu.profiler": "torch_npu/profiler/__init__.py",
    "torch_npu.distributed": "torch_npu/distributed/__init__.py",
    "torch_npu.contrib": "torch_npu/contrib/__init__.py",
    "torch_npu.optim": "torch_npu/optim/__init__.py",
}
# Packages every module of which has its bound names listed (the torch.cuda mirror and its helpers).
NAMED_PACKAGES = ("torch_npu/npu/",)
# torch_npu exports its custom operators (torch.ops.npu.*) at the top level from this list.
EXPOSED_OPERATORS = ("torch_npu/utils/exposed_api.py", "public_npu_functions")
OPS_YAML = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
# Sections of the codegen file that register kernels for existing aten operators.
KERNEL_SECTIONS = ("supported", "symint", "autograd", "quant")
OP_NAME = re.compile(r"^\s*([A-Za-z0-9_.]+)")


def module_public_names(source: str) -> list[str]:
    """``__all__`` when the module declares it as literals, else its public top-level names."""
    tree = ast.parse(source)
    declared: list[str] = []
    for node in tree.body:
        value: ast.expr | None = None
        if (
            isinstance(node, ast.Assign)
            and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            )
        ) or (isinstance(node, ast.AugAssign) and getattr(node.target, "id", None) == "__all__"):
            value = node.value
        if isinstance(value, (ast.List, ast.Tuple)):
            declared += [
                elt.value
                for elt in value.elts
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str)
            ]
    if declared:
        return sorted(set(declared))
    return sorted(_top_level_names(tree))


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {name for name in names if not name.startswith("_")}


def module_bound_names(source: str, star_names: Callable[[str], list[str]]) -> list[str]:
    """Every name the module binds at its top level (private ones and those it imports included;
    under ``if``/``try`` too); ``from M import *`` adds ``star_names(M)`` (M as written)."""
    names: set[str] = set()
    for node in _top_level_statements(ast.parse(source).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    names.update(star_names("." * node.level + (node.module or "")))
                else:
                    names.add(alias.asname or alias.name)
    return sorted(names)


def _top_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                yield from _top_level_statements(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _top_level_statements(handler.body)


def module_names(archive: zipfile.ZipFile, files: set[str]) -> dict[str, list[str]]:
    """dotted module -> every name it binds (its submodules too, for a package), for the public
    modules and every module under :data:`NAMED_PACKAGES`."""
    paths = {path: _dotted(path) for path in files if path.endswith(".py")}
    wanted = {
        path: dotted
        for path, dotted in paths.items()
        if path in PUBLIC_MODULES.values() or path.startswith(NAMED_PACKAGES)
    }
    by_dotted = {dotted: path for path, dotted in paths.items()}

    def star_names(importer: str, written: str) -> list[str]:
        """The public names of the module ``from written import *`` in ``importer`` reads."""
        level = len(written) - len(written.lstrip("."))
        target = written
        if level:
            # a package's "." is itself, a module's its package
            up = level - by_dotted[importer].endswith("__init__.py")
            package = importer.rsplit(".", up)[0]
            target = ".".join(filter(None, (package, written[level:])))
        path = by_dotted.get(target)
        return [] if path is None else module_public_names(archive.read(path).decode("utf-8"))

    result: dict[str, list[str]] = {}
    for path, dotted in wanted.items():
        source = archive.read(path).decode("utf-8")
        names = set(module_bound_names(source, functools.partial(star_names, dotted)))
        if path.endswith("__init__.py"):
            names.update(
                child.rpartition(".")[2]
                for child in paths.values()
                if child.rpartition(".")[0] == dotted
            )
        result[dotted] = sorted(name for name in names if not name.startswith("__"))
    return dict(sorted(result.items()))


def _dotted(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def kernel_ops(document: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(aten overloads with an NPU kernel, NPU-only custom operators) from the codegen yaml."""
    aten: set[str] = set()
    for section in KERNEL_SECTIONS:
        aten.update(_entry_name(entry) for entry in document.get(section) or [])
    custom = {_entry_name(entry) for entry in document.get("custom") or []}
    return sorted(aten), sorted(custom)


def _entry_name(entry: str | dict[str, Any]) -> str:
    text = entry if isinstance(entry, str) else str(entry["func"])
    match = OP_NAME.match(text)
    if match is None:
        raise ValueError(f"cannot read an operator name from {text!r}")
    return match.group(1)


def facts_from_wheel(wheel: Path) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        version = read_version(archive, files)
        modules = {
            dotted: module_public_names(archive.read(path).decode("utf-8"))
            for dotted, path in PUBLIC_MODULES.items()
            if path in files
        }
        if "torch_npu" in modules and EXPOSED_OPERATORS[0] in files:
            modules["torch_npu"] = sorted({*modules["torch_npu"], *exposed_operator_names(archive)})
        every_name = module_names(archive, files)
        aten, custom = kernel_ops(yaml.safe_load(archive.read(OPS_YAML)))
        torch_requirement = _read_torch_requirement(archive, files)
    return {
        "torch_npu_version": version,
        "torch_requirement": torch_requirement,
        "source": wheel.name,
        "public_names": modules,
        "module_names": every_name,
        "aten_ops_with_npu_kernel": aten,
        "npu_custom_ops": custom,
    }


def exposed_operator_names(archive: zipfile.ZipFile) -> list[str]:
    """The custom operators torch_npu exports at its top level (``torch_npu.npu_fusion_attention``)."""
    path, variable = EXPOSED_OPERATORS
    for node in ast.parse(archive.read(path)).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == variable for target in node.targets
        ):
            return sorted(ast.literal_eval(node.value))
    raise ValueError(f"{path} has no {variable}")


def _metadata_path(files: set[str]) -> str:
    return next(name for name in files if name.endswith(".dist-info/METADATA"))


def read_version(archive: zipfile.ZipFile, files: set[str]) -> str:
    metadata = archive.read(_metadata_path(files)).decode("utf-8")
    match = re.search(r"^Version: (\S+)$", metadata, re.MULTILINE)
    if match is None:
        raise ValueError("wheel METADATA has no Version")
    return match.group(1)


def _read_torch_requirement(archive: zipfile.ZipFile, files: set[str]) -> str | None:
    metadata = archive.read(_metadata_path(files)).decode("utf-8")
    match = re.search(r"^Requires-Dist: (torch\b[^;\n]*)", metadata, re.MULTILINE)
    return match.group(1).strip() if match else None


def download_wheel(version: str, into: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            f"torch-npu=={version}",
            "-d",
            str(into),
        ],
        check=True,
    )
    return next(into.glob(f"torch_npu-{version}-*.whl"))


def write_facts(facts: dict[str, Any], output_dir: Path) -> Path:
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f"torch_npu-{facts['torch_npu_version']}.json"
    path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="torch-npu versions to download and read")
    parser.add_argument("--wheel", type=Path, action="append", default=[], help="a wheel file")
    parser.add_argument("--output-dir", type=Path, default=OUTPUT_DIR)
    args = parser.parse_args(argv)
    wheels: list[Path] = list(args.wheel)
    with tempfile.TemporaryDirectory() as scratch:
        wheels += [download_wheel(version, Path(scratch)) for version in args.versions]
        for wheel in wheels:
            print(write_facts(facts_from_wheel(wheel), args.output_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
