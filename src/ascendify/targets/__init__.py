"""CUDA -> Ascend NPU facts shared by migrate, auto and analyze.

- :mod:`ascendify.targets.facts`: what a torch_npu release exports, generated from its wheel.
- :mod:`ascendify.targets.apis`: how each CUDA API maps to the NPU, with a safety class.
- :mod:`ascendify.targets.devices`: where devices, backends and device-named variables appear.
"""

from __future__ import annotations

from ascendify.targets.apis import (
    ApiMatch,
    ApiTarget,
    Safety,
    explicit_targets,
    match_api,
    npu_target,
)
from ascendify.targets.facts import (
    DEFAULT_VERSION,
    TorchNpuFacts,
    available_versions,
    load_facts,
    resolve_version,
)

__all__ = [
    "DEFAULT_VERSION",
    "ApiMatch",
    "ApiTarget",
    "Safety",
    "TorchNpuFacts",
    "available_versions",
    "explicit_targets",
    "load_facts",
    "match_api",
    "npu_target",
    "resolve_version",
]
