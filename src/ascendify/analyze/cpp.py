"""Custom operators that C++/CUDA sources export to Python, and CUDA kernels that must be ported.

Exports are found inside the blocks of ``PYBIND11_MODULE(name, m)`` (``m.def("f", ...)``, ``py::class_<T>(m,
"T")``) and ``TORCH_LIBRARY(ns, m)`` / ``TORCH_LIBRARY_FRAGMENT`` / ``TORCH_LIBRARY_IMPL(ns, Key, m)``
(``m.def("f(Tensor x) -> Tensor")``, ``m.impl("f", ...)``). Comments are blanked first so a commented-out export
does not count; this is a scanner, not a C++ parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ascendify.analyze.findings import Finding
from ascendify.analyze.report import CustomOp

CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp", ".hh"})
CUDA_SUFFIXES = frozenset({".cu", ".cuh"})

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_BLOCK_START = re.compile(
    r"\b(?P<macro>PYBIND11_MODULE|TORCH_LIBRARY_FRAGMENT|TORCH_LIBRARY_IMPL|TORCH_LIBRARY)\s*"
    r"\((?P<args>[^)]*)\)\s*\{"
)
_KERNEL = re.compile(r"__global__\s+(?:[\w:<>,\s*&]+?\s+)?(?P<name>\w+)\s*\(")


@dataclass(frozen=True)
class _Export:
    name: str
    line: int


def scan_cpp(text: str, file: str, is_cuda: bool) -> tuple[list[CustomOp], list[Finding]]:
    """The operators ``file`` exports (for cuda_op_list.csv) and one finding per export or kernel file."""
    code = _COMMENT.sub(lambda match: re.sub(r"[^\n]", " ", match.group()), text)
    exports: list[_Export] = []
    for block in _BLOCK_START.finditer(code):
        args = [arg.strip() for arg in block.group("args").split(",")]
        body_start = block.end()
        body = code[body_start : _matching_brace(code, body_start - 1)]
        exports.extend(_block_exports(block.group("macro"), args, body, code, body_start))
    ops = [CustomOp(file, export.name) for export in exports]
    findings = [
        Finding(
            file,
            export.line,
            export.line,
            export.name,
            "User-defined CUDA Operator: no NPU kernel; port it (e.g. as an Ascend C operator "
            "registered through torch_npu) or express it with torch ops",
            "AN105",
        )
        for export in exports
    ]
    kernels = [match.group("name") for match in _KERNEL.finditer(code)]
    if is_cuda and kernels and not exports:
        findings.append(
            Finding(
                file,
                1,
                len(code.splitlines()),
                ", ".join(kernels),
                "CUDA kernels do not run on the NPU; port them or express them with torch ops",
                "AN105",
            )
        )
    return ops, findings


def _block_exports(
    macro: str, args: list[str], body: str, code: str, body_start: int
) -> list[_Export]:
    module_var = args[-1] if args else "m"
    namespace = args[0] if args else ""

    def line_at(offset: int) -> int:
        return code.count("\n", 0, body_start + offset) + 1

    var = re.escape(module_var)
    if macro == "PYBIND11_MODULE":
        defs = re.finditer(rf"\b{var}\s*\.\s*def\s*\(\s*\"(?P<name>[^\"]+)\"", body)
        classes = re.finditer(rf"class_\s*<[^;]*?>\s*\(\s*{var}\s*,\s*\"(?P<name>[^\"]+)\"", body)
        found = sorted([*defs, *classes], key=lambda match: match.start())
        return [_Export(f"{namespace}.{m.group('name')}", line_at(m.start())) for m in found]
    method = "impl" if macro == "TORCH_LIBRARY_IMPL" else "def"
    calls = re.finditer(rf"\b{var}\s*\.\s*{method}\s*\(\s*\"(?P<name>[\w.]+)", body)
    return [_Export(f"{namespace}::{m.group('name')}", line_at(m.start())) for m in calls]


def _matching_brace(code: str, open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(code)
