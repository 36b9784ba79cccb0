"""The registry: every rule module imported, and the rules, checkers and finishers of one run.

Rule modules live in :mod:`ascendify.migrate.rules` (one per family) and
:mod:`ascendify.migrate.modes` (one per mode); :func:`load_rules` imports them all, never a list
written by hand, and reads what they registered (:data:`ascendify.migrate._rule.REGISTERED`).
Which rules a run applies is decided once per distinct :class:`Settings`, before any file is read
(:func:`registry_for`): a rule runs when its mode is on, the target is one of its targets and the
settings select it (``Settings.select``; ``--enable`` for an opt-in rule). Checkers and finishers that
serve no such rule are left out.

It stands above the protocol (:mod:`ascendify.migrate._rule`), which the rule modules import: they
never import the registry, so importing one rule module loads no other.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from ascendify.errors import AscendifyError
from ascendify.migrate._rule import (
    DEFAULT_RUN,
    REGISTERED,
    Checker,
    Finisher,
    Mode,
    Rule,
)
from ascendify.migrate._settings import Settings
from ascendify.source import Tokens


@dataclass(frozen=True)
class Registry:
    """Every rule, checker and finisher; or, from :func:`registry_for`, those of one kind of run."""

    rules: dict[str, type[Rule]]
    checkers: dict[type[ast.AST], list[Checker]]
    finishers: tuple[Finisher, ...]
    binding_triggers: tuple[Callable[[str], bool], ...]
    trigger: Tokens
    serves: dict[Callable[..., object], frozenset[type[Rule]]]
    # Set by registry_for only (load_rules' registry of everything is not one run's):
    active: frozenset[type[Rule]] = frozenset()  # the rules the run applies
    visit_everything: bool = False  # an active rule's mode looks beyond CUDA idioms


@cache
def load_rules() -> Registry:
    """Import every rule module once and return what they registered."""
    from ascendify.migrate import modes, rules

    packages = (rules, modes)
    for package in packages:
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    package_names = [package.__name__ + "." for package in packages]

    def place(finisher: Finisher) -> tuple[int, str]:
        """Rule families first, then modes, each module by name (definition order within one):
        the order of the lines they insert never depends on which module imported which first."""
        module = finisher.__module__
        rank = next((i for i, name in enumerate(package_names) if module.startswith(name)), 2)
        return rank, module

    return Registry(
        rules=dict(sorted(REGISTERED.rules.items())),
        checkers={node_type: list(found) for node_type, found in REGISTERED.checkers.items()},
        finishers=tuple(sorted(REGISTERED.finishers, key=place)),
        binding_triggers=tuple(REGISTERED.binding_triggers),
        trigger=_trigger_tokens(REGISTERED.rules.values()),
        serves={
            function: frozenset(served() if callable(served) else served)
            for function, served in REGISTERED.serves.items()
        },
    )


def _trigger_tokens(rules: Iterable[type[Rule]]) -> Tokens:
    listed = list(rules)
    return Tokens.of(
        (token for rule in listed for token in rule.triggers),
        (word for rule in listed for word in rule.trigger_words),
    )


@cache
def registry_for(settings: Settings) -> Registry:
    """The rules these settings apply, with only the checkers and finishers serving one of them.

    Made once per distinct settings (a run has one), so the per-file work is a dictionary look-up.
    """
    registry = load_rules()
    active = frozenset(rule for rule in registry.rules.values() if rule.applies(settings))

    def needed(function: Callable[..., object]) -> bool:
        return not registry.serves[function].isdisjoint(active)

    # Only the tokens of the rules this run applies: a file holding another target's tokens alone
    # (``GradScaler`` on the NPU target, ``device_id`` names on the portable one) has nothing to
    # rewrite here, and is copied without a parse.
    trigger = _trigger_tokens(active)
    return dataclasses.replace(
        registry,
        trigger=trigger,
        checkers={
            kind: [c for c in found if needed(c)] for kind, found in registry.checkers.items()
        },
        finishers=tuple(f for f in registry.finishers if needed(f)),
        active=active,
        visit_everything=any(rule.mode.visits_everything for rule in active),
    )


def iter_modes() -> list[Mode]:
    """The modes that have rules, in the order of the mode rule reference (without the default run)."""
    modes = {rule.mode for rule in load_rules().rules.values()} - {DEFAULT_RUN}
    return sorted(modes, key=lambda mode: mode.rank)


def switch_modes() -> list[Mode]:
    """The on/off modes (those with a :class:`Switch`), in the order of the mode rule reference."""
    return [mode for mode in iter_modes() if mode.switch is not None]


def iter_rules(mode: Mode | None = DEFAULT_RUN) -> Iterator[type[Rule]]:
    """Rules of the default run, of one mode, or of every mode (None)."""
    for rule in load_rules().rules.values():
        if mode is None or rule.mode == mode:
            yield rule


def opt_in_codes(codes: Iterable[str]) -> frozenset[str]:
    """The codes a user enables (``--enable``), checked to name opt-in rules."""
    opt_in = sorted(rule.code for rule in load_rules().rules.values() if rule.opt_in)
    for code in codes:
        if code not in opt_in:
            raise AscendifyError(
                f"--enable {code}: not an opt-in rule (opt-in rules: {', '.join(opt_in)})"
            )
    return frozenset(codes)
