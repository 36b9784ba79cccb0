"""``ascendify migrate``: rewrite a PyTorch GPU project for Ascend NPUs.

The pure core is :func:`migrate_source` (bytes in, :data:`FileResult` out, never raises). Rules are
found in :mod:`ascendify.migrate.rules`; the tree walk, reports and parallelism sit on top.
"""

from __future__ import annotations

from ascendify.migrate._engine import (
    Changed,
    Failed,
    FileResult,
    Settings,
    Skipped,
    SkipReason,
    Unchanged,
    apply_edits,
    migrate_source,
)
from ascendify.migrate._names import Binding, NameResolver, import_bindings
from ascendify.migrate._rule import (
    Change,
    Context,
    Edit,
    Finding,
    Operation,
    Rule,
    checks,
    iter_rules,
    load_rules,
)

__all__ = [
    "Binding",
    "Change",
    "Changed",
    "Context",
    "Edit",
    "Failed",
    "FileResult",
    "Finding",
    "NameResolver",
    "Operation",
    "Rule",
    "Settings",
    "SkipReason",
    "Skipped",
    "Unchanged",
    "apply_edits",
    "checks",
    "import_bindings",
    "iter_rules",
    "load_rules",
    "migrate_source",
]
