"""The migrate docs carry rule references generated from the rule docstrings."""

from __future__ import annotations

import pytest
from scripts.document_rules import MODE_RULES, RULES, Reference, render_page


@pytest.mark.parametrize("reference", [RULES, MODE_RULES], ids=lambda r: r.page.name)
def test_rule_reference_is_up_to_date(reference: Reference) -> None:
    current = reference.page.read_text(encoding="utf-8")
    assert render_page(reference, current) == current, "run: python scripts/document_rules.py"


@pytest.mark.parametrize("reference", [RULES, MODE_RULES], ids=lambda r: r.page.name)
def test_every_rule_is_documented(reference: Reference) -> None:
    page = reference.page.read_text(encoding="utf-8")
    rules = reference.rules()
    assert rules
    for rule in rules:
        assert f"### {rule.code} `{rule.name}`" in page
