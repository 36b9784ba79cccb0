"""Generate the test-only torch_npu stand-in from the real torch-npu wheel.

The stand-in (``tests/npu_standin/site``) lets tests run NPU code on the CPU while holding it to the
real torch_npu API: this script reads the wheel as a zip archive (torch_npu cannot be imported without
CANN) and writes, for each public module, a small module file plus one JSON description of the API:
the public names of each module and, for every function and class, its call signature read with
``ast`` from the wheel's Python files (for the custom operators, their schemas in the wheel's
operator yaml, parsed with torch's ``torchgen``). The hand-written runtime in
``tests/npu_standin/site/_npu_standin`` turns that description into modules whose names bind their
arguments against the real signatures.

Usage::

    python -m scripts.generate_npu_standin 2.13.0           # downloads the wheel with pip
    python -m scripts.generate_npu_standin --wheel torch_npu-2.13.0-...whl
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import tempfile
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from torchgen.model import Argument, FunctionSchema  # type: ignore[import-untyped]

from scripts.generate_torch_npu_data import (
    OPS_YAML,
    PUBLIC_MODULES,
    download_wheel,
    exposed_operator_names,
    module_public_names,
    read_version,
)

ROOT = Path(__file__).resolve().parents[1]
OUTPUT_DIR = ROOT / "tests" / "npu_standin" / "site" / "torch_npu"
API_FILE = "_standin_api.json"
DEFAULT_VERSION = "2.13.0"

# How deep the list of the wheel's other modules goes (torch_npu.contrib.transfer_to_npu).
OTHER_MODULES_DEPTH = 3
# Dunder methods that are part of how user code calls a class.
CALLED_DUNDERS = {"__call__", "__enter__", "__exit__"}

STUB = '''\
"""{module} as the npu stand-in for tests; generated from torch_npu {version} by
scripts/generate_npu_standin.py: do not edit."""

from _npu_standin.module import install as _install

_install(__name__)
'''

Signature = list[list[str | None]]
Entry = dict[str, Any]


@dataclass
class Wheel:
    """The Python sources of a wheel, parsed on demand."""

    archive: zipfile.ZipFile
    files: set[str]
    trees: dict[str, ast.Module] = field(default_factory=dict)

    def module_file(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        return next((p for p in (f"{base}.py", f"{base}/__init__.py") if p in self.files), None)

    def tree(self, path: str) -> ast.Module:
        if path not in self.trees:
            # The wheel's own invalid escape sequences are not ours to report.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.trees[path] = ast.parse(self.archive.read(path).decode("utf-8"))
        return self.trees[path]


def signature(arguments: ast.arguments, drop_first: bool) -> Signature:
    """``[name, kind, default source or None]`` per parameter, kinds named as in ``inspect``."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += arguments.defaults
    kinds = ["POSITIONAL_ONLY"] * len(arguments.posonlyargs)
    kinds += ["POSITIONAL_OR_KEYWORD"] * len(arguments.args)
    params: Signature = [
        [arg.arg, kind, _source(default)]
        for arg, kind, default in zip(positional, kinds, defaults, strict=True)
    ]
    if drop_first:
        params = params[1:]
    if arguments.vararg:
        params.append([arguments.vararg.arg, "VAR_POSITIONAL", None])
    params += [
        [arg.arg, "KEYWORD_ONLY", _source(default)]
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg:
        params.append([arguments.kwarg.arg, "VAR_KEYWORD", None])
    return params


def _source(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {ast.unparse(decorator) for decorator in node.decorator_list}


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements, including those under ``if``/``try`` (import fallbacks, guards)."""
    flat: list[ast.stmt] = []
    for node in body:
        flat.append(node)
        if isinstance(node, (ast.If, ast.Try)):
            flat += _statements(node.body) + _statements(node.orelse)
    return flat


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


class Resolver:
    """Finds where a module's name is defined, following imports inside the wheel."""

    def __init__(self, wheel: Wheel) -> None:
        self.wheel = wheel

    def describe(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> Entry:
        key = f"{module}.{name}"
        path = self.wheel.module_file(module)
        if path is None or key in seen:
            return {"kind": "external", "origin": key}
        seen = seen | {key}
        binding: ast.stmt | None = None
        star_sources: list[str] = []
        for node in _statements(self.wheel.tree(path).body):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                star_sources.append(_absolute(module, path.endswith("__init__.py"), node))
            elif name in _bound_names(node):
                binding = node
        if binding is None:
            for source in star_sources:
                entry = self.describe(source, name, seen)
                if entry["kind"] != "external":
                    return entry
            child = f"{module}.{name}"
            if self.wheel.module_file(child):
                return {"kind": "module", "module": child}
            return {"kind": "external", "origin": key}
        return self._entry(module, path, name, binding, seen)

    def _entry(
        self, module: str, path: str, name: str, node: ast.stmt, seen: frozenset[str]
    ) -> Entry:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return {
                "kind": "function",
                "defined_in": f"{module}.{node.name}",
                "signature": signature(node.args, drop_first=False),
            }
        if isinstance(node, ast.ClassDef):
            return {"defined_in": f"{module}.{node.name}", **self._class(module, node, seen)}
        if isinstance(node, ast.ImportFrom):
            alias = next(a for a in node.names if (a.asname or a.name) == name)
            source = _absolute(module, path.endswith("__init__.py"), node)
            if self.wheel.module_file(f"{source}.{alias.name}"):
                return {"kind": "module", "module": f"{source}.{alias.name}"}
            return self.describe(source, alias.name, seen)
        if isinstance(node, ast.Import):
            alias = next(a for a in node.names if (a.asname or a.name.split(".")[0]) == name)
            return {"kind": "module", "module": alias.name if alias.asname else name}
        value = getattr(node, "value", None)
        if isinstance(value, ast.Name):
            return self.describe(module, value.id, seen)
        return {"kind": "object", "value": _source(value)}

    def _class(self, module: str, node: ast.ClassDef, seen: frozenset[str]) -> Entry:
        # A class with no base but object takes no arguments unless it defines a constructor.
        plain = all(isinstance(b, ast.Name) and b.id == "object" for b in node.bases)
        inherited: Entry = {"signature": [] if plain else None, "methods": {}}
        for base in reversed(node.bases):
            if isinstance(base, ast.Name):
                described = self.describe(module, base.id, seen)
                if described["kind"] == "class":
                    inherited = described
        methods: dict[str, Signature] = dict(inherited["methods"])
        attributes: list[str] = list(inherited.get("attributes", []))
        constructors: dict[str, Signature] = {}
        for item in node.body:
            attributes += [name for name in _bound_names(item) if not name.startswith("_")]
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            decorators = _decorators(item)
            if item.name in ("__init__", "__new__"):
                constructors[item.name] = signature(item.args, drop_first=True)
            elif (
                not item.name.startswith("_") or item.name in CALLED_DUNDERS
            ) and "property" not in decorators:
                static = "staticmethod" in decorators
                methods[item.name] = signature(item.args, drop_first=not static)
        constructor = constructors.get("__init__", constructors.get("__new__"))
        if constructor is None:
            constructor = inherited["signature"]
        attributes = sorted(set(attributes) - set(methods))
        return {
            "kind": "class",
            "signature": constructor,
            "methods": methods,
            "attributes": attributes,
        }


def _bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def exposed_operators(wheel: Wheel) -> dict[str, Entry]:
    """torch_npu's top-level custom operators, each with the signatures of its schema overloads."""
    overloads = operator_overloads(yaml.safe_load(wheel.archive.read(OPS_YAML)))
    names = exposed_operator_names(wheel.archive)
    return {name: {"kind": "operator", "overloads": overloads[name]} for name in names}


def operator_overloads(document: dict[str, Any]) -> dict[str, list[Signature]]:
    """Operator name -> the call signature of each overload of its schema (``custom`` section)."""
    overloads: dict[str, list[Signature]] = {}
    for entry in document.get("custom") or []:
        schema = FunctionSchema.parse(entry if isinstance(entry, str) else entry["func"])
        arguments = schema.arguments
        params: Signature = [
            _schema_param(a, "POSITIONAL_OR_KEYWORD") for a in arguments.flat_positional
        ]
        keyword_only = [*arguments.flat_kwarg_only, *arguments.out]
        params += [_schema_param(a, "KEYWORD_ONLY") for a in keyword_only]
        overloads.setdefault(str(schema.name.name), []).append(params)
    return overloads


def _schema_param(argument: Argument, kind: str) -> list[str | None]:
    return [argument.name, kind, argument.default]


def api_from_wheel(wheel_path: Path) -> dict[str, Any]:
    """The stand-in's description of the public API: module -> file, children and names."""
    with zipfile.ZipFile(wheel_path) as archive:
        files = set(archive.namelist())
        wheel = Wheel(archive, files)
        resolver = Resolver(wheel)
        present = {dotted: path for dotted, path in PUBLIC_MODULES.items() if path in files}
        modules: dict[str, Any] = {}
        for dotted, path in sorted(present.items()):
            children = sorted(m for m in present if m.rpartition(".")[0] == dotted)
            names = set(module_public_names(archive.read(path).decode("utf-8")))
            names.update(child.rpartition(".")[2] for child in children)
            entries = {name: resolver.describe(dotted, name) for name in sorted(names)}
            if dotted == "torch_npu":
                entries.update(exposed_operators(wheel))
            modules[dotted] = {"file": path, "children": children, "names": entries}
        return {
            "torch_npu_version": read_version(archive, files),
            "source": wheel_path.name,
            "modules": modules,
            "other_modules": other_modules(files, set(modules)),
        }


def other_modules(files: set[str], provided: set[str]) -> list[str]:
    """The wheel's public modules the stand-in does not provide, down to OTHER_MODULES_DEPTH parts
    (importing a deeper one imports one of these first)."""
    found = set()
    for path in files:
        if path.startswith("torch_npu/") and path.endswith(".py"):
            parts = path.removesuffix(".py").removesuffix("/__init__").split("/")
            if not any(part.startswith("_") for part in parts[1:OTHER_MODULES_DEPTH]):
                found.add(".".join(parts[:OTHER_MODULES_DEPTH]))
    return sorted(found - provided)


def write_standin(api: dict[str, Any], output_dir: Path) -> list[Path]:
    """Replace ``output_dir`` (the stand-in's ``torch_npu`` package) with modules for ``api``."""
    if output_dir.exists():
        shutil.rmtree(output_dir)
    written = []
    for dotted, module in api["modules"].items():
        path = output_dir.parent / module["file"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(STUB.format(module=dotted, version=api["torch_npu_version"]), "utf-8")
        written.append(path)
    api_path = output_dir / API_FILE
    api_path.write_text(json.dumps(api, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return [*written, api_path]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("version", nargs="?", default=DEFAULT_VERSION, help="torch-npu version")
    source.add_argument("--wheel", type=Path, help="a torch_npu wheel file instead of pip download")
    parser.add_argument("--output-dir", type=Path, default=OUTPUT_DIR)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        wheel = args.wheel or download_wheel(args.version, Path(scratch))
        for path in write_standin(api_from_wheel(wheel), args.output_dir):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
