"""The version pairs the catalogue knows to fail, and ``ascendify doctor``'s check of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ascendify.doctor import Host, Status, check_known_failures
from ascendify.explain.catalogue import load
from ascendify.explain.versions import known_failures, matches


@pytest.mark.parametrize(
    ("version", "op", "wanted", "expected"),
    [
        ("8.2.RC1", "<", "8.3", True),
        ("8.3.RC1", "<", "8.3", False),
        ("8.0.0", "<", "8.3", True),
        ("2.0.2", ">=", "2", True),
        ("1.26.4", ">=", "2", False),
        ("2.7.1.post2", "prefix", "2.7.1", True),
        ("2.7.10", "prefix", "2.7.1", True),  # prefix is on the text, as the rule says
        ("2.8.0", "==", "2.8", True),
    ],
)
def test_versions_compare_number_by_number(
    version: str, op: str, wanted: str, expected: bool
) -> None:
    assert matches(version, op, wanted) is expected


def test_every_rule_names_a_signature_of_the_catalogue() -> None:
    catalogue = load()
    ids = {signature.id for signature in catalogue.signatures}
    assert catalogue.version_rules
    assert all(rule.signature in ids for rule in catalogue.version_rules)


def test_numpy_2_with_cann_8_2_is_a_known_failure_and_numpy_1_is_not() -> None:
    [problem] = known_failures({"numpy": "2.0.2", "cann": "8.2.RC1", "torch-npu": "2.7.1"})
    assert problem.rule.id == "VER001"
    assert "500001" in problem.describe()
    assert known_failures({"numpy": "1.26.4", "cann": "8.2.RC1"}) == []
    assert known_failures({"numpy": "2.0.2"}) == []  # no CANN: nothing is known to fail


@dataclass(frozen=True)
class _Installed(Host):
    packages: dict[str, str] = field(default_factory=dict)

    def installed(self, distribution: str) -> str | None:
        return self.packages.get(distribution)


def test_doctor_names_a_known_failing_pair_with_its_fix(tmp_path: Path) -> None:
    record = tmp_path / "aarch64-linux" / "ascend_toolkit_install.info"
    record.parent.mkdir()
    record.write_text("version=8.2.RC1\n")
    host = _Installed(env={"ASCEND_HOME_PATH": str(tmp_path)}, packages={"numpy": "2.1.0"})
    [check] = check_known_failures(host)
    assert check.status is Status.FAIL
    assert "numpy 2.1.0, cann 8.2.RC1" in check.detail
    assert "pip install 'numpy<2'" in check.fix
    assert "https://github.com/vllm-project/vllm-ascend/issues/2210" in check.fix
    assert check_known_failures(_Installed(env={}, packages={"numpy": "2.1.0"})) == []
