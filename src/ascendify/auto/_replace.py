"""``ASCENDIFY_REPLACE_UNSUPPORTED=1``: the redirect also routes APIs the NPU cannot run to the
replacements of ``ascendify migrate -sim`` (the catalogue of :mod:`ascendify.replace`).

Opt-in, because fallbacks are slow and exact composites round differently. Which APIs are replaced is
decided by the data of the installed torch_npu release (the default release when none is installed or
ascendify has no data for it).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping

from ascendify.auto._patcher import Replacement
from ascendify.auto._resolve import UnresolvedTargetError, resolve_owner
from ascendify.errors import AscendifyError
from ascendify.targets import TorchNpuFacts, load_facts

ENV = "ASCENDIFY_REPLACE_UNSUPPORTED"


def unsupported_api_replacements(environ: Mapping[str, str]) -> list[Replacement]:
    """The catalogue's functions in place of the APIs, when ``environ`` opts in; else nothing."""
    wanted = environ.get(ENV, "0")
    if wanted not in ("0", "1"):
        raise AscendifyError(f"{ENV}={wanted!r}: use 1 to replace unsupported APIs, 0 not to")
    if wanted == "0":
        return []
    from ascendify.replace import CATALOGUE, library

    facts = _installed_facts()
    replacements = []
    for entry in CATALOGUE:
        if entry.unsupported(facts):
            for api in entry.apis:
                try:
                    owner, name = resolve_owner(api)
                except (UnresolvedTargetError, ImportError):
                    continue  # not in this torch
                replacements.append(Replacement(api, owner, name, getattr(library, entry.function)))
    return replacements


def _installed_facts() -> TorchNpuFacts:
    try:
        return load_facts(importlib.metadata.version("torch_npu"))
    except (importlib.metadata.PackageNotFoundError, AscendifyError):
        return load_facts()
