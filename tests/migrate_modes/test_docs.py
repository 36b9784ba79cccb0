"""docs/migrate-modes.md carries the mode-rule reference generated from the rule docstrings."""

from __future__ import annotations

from scripts.document_mode_rules import MODES, PAGE, render_page

from ascendify.migrate import iter_rules


def test_mode_rule_reference_is_up_to_date() -> None:
    current = PAGE.read_text(encoding="utf-8")
    assert render_page(current) == current, "run: python scripts/document_mode_rules.py"


def test_every_mode_rule_is_documented() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for mode in MODES:
        for rule in iter_rules(mode):
            assert f"### {rule.code} `{rule.name}`" in page
