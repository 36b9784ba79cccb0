"""docs/migrate.md carries the rule reference generated from the rule docstrings."""

from __future__ import annotations

from scripts.document_rules import PAGE, render_page

from ascendify.migrate import iter_rules


def test_rule_reference_is_up_to_date() -> None:
    current = PAGE.read_text(encoding="utf-8")
    assert render_page(current) == current, "run: python scripts/document_rules.py"


def test_every_rule_is_documented() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for rule in iter_rules():
        assert f"### {rule.code} `{rule.name}`" in page
