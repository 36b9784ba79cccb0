"""Replace APIs the NPU cannot run (``ascendify migrate -sim``, ``ASCENDIFY_REPLACE_UNSUPPORTED=1``).

- :mod:`ascendify.replace.catalogue`: which APIs, which kind (exact or fallback), tolerance, codes (no torch).
- :mod:`ascendify.replace.library`: the replacement code itself, copied into results as ``ascend_function``.
"""

from __future__ import annotations

from ascendify.replace._source import docstring, generated_functions, library_source
from ascendify.replace.catalogue import (
    BY_API,
    CATALOGUE,
    PACKAGE,
    Kind,
    Replacement,
    replacement_for,
)

__all__ = [
    "BY_API",
    "CATALOGUE",
    "PACKAGE",
    "Kind",
    "Replacement",
    "docstring",
    "generated_functions",
    "library_source",
    "replacement_for",
]
