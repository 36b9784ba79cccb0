"""docs/replace.md carries the catalogue reference generated from the catalogue and its docstrings."""

from __future__ import annotations

from scripts.document_rules import CATALOGUE_PAGE, render_catalogue_page

from ascendify.replace import CATALOGUE


def test_catalogue_reference_is_up_to_date() -> None:
    current = CATALOGUE_PAGE.page.read_text(encoding="utf-8")
    assert render_catalogue_page(current) == current, "run: python scripts/document_rules.py"


def test_every_replacement_is_documented() -> None:
    page = CATALOGUE_PAGE.page.read_text(encoding="utf-8")
    for entry in CATALOGUE:
        assert f"### {entry.code} `ascend_function.{entry.function}` ({entry.kind.value})" in page
