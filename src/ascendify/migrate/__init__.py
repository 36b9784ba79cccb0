"""``ascendify migrate``: rewrite a PyTorch GPU project for Ascend NPUs.

The pure core is :func:`migrate_source` (bytes in, :data:`FileResult` out, never raises). Rules are
found in :mod:`ascendify.migrate.rules`. On top: :func:`plan_tree` and :func:`migrate_tree` (mirror
a project, parallel over files) and :func:`run_migration` (plus log, change list and summary).
"""

from __future__ import annotations

from ascendify.migrate._engine import (
    Changed,
    Failed,
    FileResult,
    Skipped,
    SkipReason,
    Unchanged,
    apply_edits,
    migrate_source,
)
from ascendify.migrate._modes import DistributedMode, Modes, Target
from ascendify.migrate._registry import (
    iter_modes,
    iter_rules,
    load_rules,
    opt_in_codes,
    switch_modes,
)
from ascendify.migrate._rule import (
    Change,
    Context,
    Edit,
    Extras,
    Finding,
    Mode,
    Operation,
    Rule,
    Switch,
    checks,
)
from ascendify.migrate._run import reserved_names, run_migration
from ascendify.migrate._settings import Settings
from ascendify.migrate._tree import (
    Companion,
    FileOutcome,
    Options,
    TreePlan,
    TreeResult,
    migrate_tree,
    plan_tree,
    prepare_output,
)

__all__ = [
    "Change",
    "Changed",
    "Companion",
    "Context",
    "DistributedMode",
    "Edit",
    "Extras",
    "Failed",
    "FileOutcome",
    "FileResult",
    "Finding",
    "Mode",
    "Modes",
    "Operation",
    "Options",
    "Rule",
    "Settings",
    "SkipReason",
    "Skipped",
    "Switch",
    "Target",
    "TreePlan",
    "TreeResult",
    "Unchanged",
    "apply_edits",
    "checks",
    "iter_modes",
    "iter_rules",
    "load_rules",
    "migrate_source",
    "migrate_tree",
    "opt_in_codes",
    "plan_tree",
    "prepare_output",
    "reserved_names",
    "run_migration",
    "switch_modes",
]
