"""The migrate docs carry rule references generated from the rule docstrings, and the facts the code has."""

from __future__ import annotations

import re

import pytest
from scripts.document_rules import DOCS, MODE_RULES, RULES, Reference, render_page

from ascendify.errors import AscendifyError
from ascendify.targets.facts import (
    DEFAULT_VERSION,
    available_versions,
    resolve_version,
    version_help,
)


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


@pytest.mark.parametrize(
    ("page", "marker"),
    [("migrate.md", "| `-v/--version V` |"), ("analyze.md", "and `-v` picks the release")],
)
def test_the_docs_name_the_releases_the_error_names(page: str, marker: str) -> None:
    text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
    described = text[text.index(marker) :].split(")", 1)[0]
    listed, _, default = described.partition("(default ")
    versions = re.findall(r"`([0-9][^`]*)`", listed)
    assert versions == available_versions()
    assert default.startswith(f"`{DEFAULT_VERSION}`")
    with pytest.raises(AscendifyError) as refused:
        resolve_version("0.1")
    assert str(refused.value).endswith(f"known versions: {', '.join(versions)}")
    assert version_help().startswith(", ".join(versions))
