"""What a given torch_npu release really offers, read from its wheel by ``scripts/generate_torch_npu_data.py``.

The JSON files under ``data/`` are generated and committed; nothing here needs torch_npu installed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ascendify.errors import AscendifyError

DEFAULT_VERSION = "2.13.0"


@dataclass(frozen=True)
class TorchNpuFacts:
    version: str
    torch_requirement: str | None
    public_names: dict[str, frozenset[str]]  # each public module's __all__
    # every name each module binds, private and imported ones included (torch_npu.npu._lazy_call)
    module_names: dict[str, frozenset[str]]
    aten_ops_with_npu_kernel: frozenset[str]
    npu_custom_ops: frozenset[str]

    def has(self, qualified_name: str) -> bool:
        """Whether a name like ``torch_npu.npu.set_device`` exists in this release: public, or bound
        by its module all the same (``torch_npu.npu._lazy_call``, ``default_generators``).

        The longest listed module that prefixes the name must bind the next component; components
        after that are attributes of an exported object (``ProfilerActivity.NPU``) and are trusted.
        """
        module = qualified_name
        while module:
            if module in self.public_names or module in self.module_names:
                rest = qualified_name[len(module) + 1 :]
                first = rest.split(".", 1)[0]
                return (
                    not rest
                    or first in self.public_names.get(module, ())
                    or first in self.module_names.get(module, ())
                    or (self._shadowed(module) and "." not in rest)
                )
            module = module.rpartition(".")[0]
        return False

    def torch_version(self) -> tuple[int, int] | None:
        """The (major, minor) of the torch this release is built for (None when unstated)."""
        found = re.search(r"(\d+)\.(\d+)", self.torch_requirement or "")
        return None if found is None else (int(found.group(1)), int(found.group(2)))

    def _shadowed(self, module: str) -> bool:
        """Whether a package binds, over its submodule ``x``, the object ``x`` that the submodule
        exports (``from .mstx import mstx``): then ``package.x.name`` is a member of that object."""
        package, _, last = module.rpartition(".")
        return last in self.public_names.get(package, ()) and last in self.public_names.get(
            module, ()
        )

    def has_npu_kernel(self, aten_overload: str) -> bool:
        """Whether an aten overload (``"addmm"`` for the default one, ``"addmm.out"``) has an NPU kernel."""
        return aten_overload in self.aten_ops_with_npu_kernel


def available_versions() -> list[str]:
    """torch_npu versions ascendify has facts for, oldest first."""
    names = [entry.name for entry in resources.files(__package__).joinpath("data").iterdir()]
    versions = [name[len("torch_npu-") : -len(".json")] for name in names if name.endswith(".json")]
    return sorted(versions, key=_version_key)


# The PyTorch versions msFmkTransplt's -v has named (its current four, and those of 2024-2025). A
# torch_npu release is numbered as the torch it is built for; one we have no data for is read as
# the newest release before it, whose APIs the later one keeps.
MSFT_PYTORCH_VERSIONS = ("2.1.0", "2.2.0", "2.3.1", "2.4.0", "2.5.1", "2.6.0", "2.7.1", "2.8.0")


def version_help() -> str:
    """The releases ``-v`` takes, for --help: the same list its error names (and the docs)."""
    return (
        f"{', '.join(available_versions())} (default {DEFAULT_VERSION}; a prefix such as 2.13 "
        "picks the newest release it starts); msFmkTransplt's PyTorch versions "
        f"({', '.join(MSFT_PYTORCH_VERSIONS)}) pick the newest release not after them"
    )


def resolve_version(requested: str | None) -> str:
    """Map a user's ``-v`` (``2.1.0``, ``2.13``, ``2.1.0.post17``) to a version we have data for."""
    wanted = requested or DEFAULT_VERSION
    versions = available_versions()
    if wanted in versions:
        return wanted
    matching = [v for v in versions if v.startswith(wanted + ".")]
    if matching:
        return matching[-1]
    if wanted in MSFT_PYTORCH_VERSIONS:
        before = [v for v in versions if _version_key(v) <= _version_key(wanted)]
        if before:
            return before[-1]
    raise AscendifyError(
        f"no torch_npu facts for version {wanted!r}; known versions: {', '.join(versions)}"
    )


@cache
def load_facts(version: str | None = None) -> TorchNpuFacts:
    resolved = resolve_version(version)
    path = resources.files(__package__).joinpath("data").joinpath(f"torch_npu-{resolved}.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    return TorchNpuFacts(
        version=raw["torch_npu_version"],
        torch_requirement=raw["torch_requirement"],
        public_names={module: frozenset(names) for module, names in raw["public_names"].items()},
        module_names={module: frozenset(names) for module, names in raw["module_names"].items()},
        aten_ops_with_npu_kernel=frozenset(raw["aten_ops_with_npu_kernel"]),
        npu_custom_ops=frozenset(raw["npu_custom_ops"]),
    )


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(
        int(part.removeprefix("post")) for part in version.split(".") if part[-1:].isdigit()
    )
