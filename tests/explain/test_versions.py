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
        ("2.7.1", "exact", "2.7.1", True),
        ("2.7.1.post4", "exact", "2.7.1", False),  # the fixed build of the same release
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
    [check] = [row for row in check_known_failures(host) if row.status is Status.FAIL]
    assert check.name == "known failure VER001"
    assert "numpy 2.1.0, cann 8.2.RC1" in check.detail
    assert "pip install 'numpy<2'" in check.fix
    assert "https://github.com/vllm-project/vllm-ascend/issues/2210" in check.fix
    passing = check_known_failures(_Installed(env={}, packages={"numpy": "2.1.0"}))
    assert {row.status for row in passing} == {Status.OK}
    assert len(passing) == len(load().version_rules)  # a row for every rule checked
    assert passing[0].detail.startswith("not this host: numpy 2.1.0, cann absent: ")


@pytest.mark.parametrize(
    ("installed", "rule"),
    [
        ({"transformers": "4.51.0", "torch-npu": "2.2.0"}, "VER004"),
        ({"transformers": "4.49.0", "torch-npu": "2.2.0"}, None),
        ({"transformers": "4.51.0", "torch-npu": "2.5.1"}, None),
        ({"torch-npu": "2.7.1", "cann": "9.0.0"}, "VER005"),
        ({"torch-npu": "2.7.1.post4", "cann": "9.0.0"}, None),
        ({"torch-npu": "2.1.0.post4", "cann": "8.0.RC1"}, "VER006"),
        ({"vllm-ascend": "0.11.0rc1", "torch": "2.8.0"}, "VER007"),
        ({"vllm-ascend": "0.11.0rc1", "torch": "2.7.1"}, None),
    ],
)
def test_framework_and_toolkit_pairs_from_threads(
    installed: dict[str, str], rule: str | None
) -> None:
    assert [problem.rule.id for problem in known_failures(installed)] == ([rule] if rule else [])


def test_doctor_reads_the_driver_and_firmware_versions(tmp_path: Path) -> None:
    from ascendify.doctor import check_driver

    (tmp_path / "driver").mkdir()
    (tmp_path / "driver" / "version.info").write_text(
        "Version=24.1.rc2\nascendhal_version=7.35.23\n"
    )
    rows = {row.name: row.detail for row in check_driver(Host(ascend_root=tmp_path))}
    assert rows["Ascend driver"] == "24.1.rc2"
    assert rows["Ascend firmware"].startswith("not found (")
