"""Fuzz: the golden configuration cases, cut, spliced and sprinkled with odd characters, go through
the configuration migration. It never raises (a file that is not UTF-8 fails to decode), migrating its result again
changes nothing, and a YAML or JSON file that parsed before still parses after. A seeded generator
makes every failure reproducible (the case and the seed are in the message)."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from ascendify.migrate import Changed, Failed, Settings
from ascendify.migrate._configs import migrate_config
from ascendify.migrate._modes import Modes, Target
from tests.migrate._cases import Case, all_cases

SEED = 20261202
CONFIG_CASES = [case for case in all_cases() if not case.rel.endswith(".py")]
_ODD = [
    "\t",
    "\r\n",
    "\\\n",
    "#",
    '"',
    "'",
    "{",
    "}",
    "[",
    "]",
    ":",
    "-",
    " ",
    "\x00",
    "é",
    "\u2028",
]


def _mutants(text: str, rng: random.Random) -> list[str]:
    out = []
    for _ in range(8):
        cut = rng.randrange(len(text) + 1)
        kind = rng.randrange(4)
        if kind == 0:
            out.append(text[:cut])
        elif kind == 1:
            out.append(text[:cut] + rng.choice(_ODD) + text[cut:])
        elif kind == 2:
            out.append(text[:cut] + text[rng.randrange(len(text) + 1) :])
        else:
            lines = text.splitlines(keepends=True)
            rng.shuffle(lines)
            out.append("".join(lines))
    return out


def _parses(rel: str, text: str) -> bool:
    try:
        if rel.endswith(".json"):
            json.loads(text)
        elif rel.endswith((".yaml", ".yml")):
            list(yaml.safe_load_all(text))
    except (ValueError, yaml.YAMLError):
        return False
    return True


@pytest.mark.parametrize("case", CONFIG_CASES, ids=lambda case: case.id)
def test_mutated_configs_migrate_safely(case: Case) -> None:
    rng = random.Random(f"{SEED}:{case.id}")
    for target in Target:
        settings = Settings(modes=Modes(target=target))
        for text in _mutants(case.source, rng):
            where = f"{case.id} seed {SEED} target {target.value}: {text!r}"
            result = migrate_config(text.encode(), settings, case.rel)
            assert not isinstance(result, Failed) or "decode" in result.error, where
            if not isinstance(result, Changed):
                continue
            output = result.data.decode(result.encoding)
            if _parses(case.rel, text):
                assert _parses(case.rel, output), where
            again = migrate_config(result.data, settings, case.rel)
            assert not isinstance(again, Changed), where
