from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from ascendify.launch.ranktable import (
    RankTableError,
    RankTableNotReady,
    assemble,
    parse_hccn_conf,
    parse_rank_table,
    read_rank_table,
    to_json,
)

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> object:
    return json.loads((FIXTURES / name).read_text())


def test_v0_template_converts_to_v1_as_modelarts_does() -> None:
    table = parse_rank_table(load("v0_two_pods.json"))
    assert table.source_version == "0"
    assert to_json(table) == load("v0_two_pods.expected_v1.json")
    # pods listed out of order: pod -0 comes first and keeps its name for matching
    assert [server.pod_name for server in table.servers] == ["job-trainjob-0", "job-trainjob-1"]
    assert table.rank_size == 4


def test_v1_0_round_trips_with_extra_server_fields() -> None:
    data = load("v1_0_two_servers.json")
    table = parse_rank_table(data)
    assert [d.device_id for d in table.servers[1].devices] == ["4", "5"]
    assert [d.rank_id for d in table.servers[1].devices] == ["2", "3"]
    assert to_json(table) == data


def test_v1_2_keeps_super_pod_fields() -> None:
    data = load("v1_2_a3.json")
    table = parse_rank_table(data)
    assert table.version == "1.2"
    assert table.servers[0].devices[1].extra == {"super_device_id": "37748737"}
    assert to_json(table) == data


def test_v2_is_refused_with_its_name() -> None:
    with pytest.raises(RankTableError, match=r"2\.0"):
        parse_rank_table(load("v2_0.json"))


def test_incomplete_table_is_not_ready() -> None:
    with pytest.raises(RankTableNotReady, match="initializing"):
        parse_rank_table(load("v0_initializing.json"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"status": "completed", "version": "1.0", "server_list": [{"device": []}]}, "server_id"),
        ({"status": "completed", "version": "1.0", "server_list": "x"}, "server_list"),
        (
            {
                "status": "completed",
                "version": "1.0",
                "server_list": [
                    {"server_id": "a", "device": [{"device_id": "0", "rank_id": "r0"}]}
                ],
            },
            "rank_id must be a whole number",
        ),
        ({"status": "completed", "group_list": []}, "one non-empty group"),
        ([], "JSON object"),
    ],
)
def test_malformed_tables_name_the_problem(data: object, message: str) -> None:
    with pytest.raises(RankTableError, match=message):
        parse_rank_table(data)


def _one_server(*devices: tuple[object, object]) -> dict[str, object]:
    listed = [{"device_id": device, "rank_id": rank} for device, rank in devices]
    return {
        "status": "completed",
        "version": "1.0",
        "server_list": [{"server_id": "10.0.0.1", "device": listed}],
    }


@pytest.mark.parametrize(
    ("devices", "message"),
    [
        ((("99", "0"),), r"field 'device_id' of server 10\.0\.0\.1: '99' is not a device number"),
        ((("100", "0"),), r"'100' is not a device number \(0\.\.63\)"),
        ((("-1", "0"),), r"field 'device_id' of server 10\.0\.0\.1: '-1' is not a device"),
        (
            (("0", "0"), ("0", "1")),
            r"field 'device_id' of server 10\.0\.0\.1: device 0 is listed twice",
        ),
        ((("0", "\u00b2"),), r"rank_id must be a whole number, got '\u00b2'"),
    ],
)
def test_impossible_devices_are_refused_naming_the_field(
    devices: tuple[tuple[object, object], ...], message: str
) -> None:
    with pytest.raises(RankTableError, match=message):
        parse_rank_table(_one_server(*devices))


def test_a_v0_template_naming_one_device_twice_is_refused() -> None:
    data = load("v0_two_pods.json")
    assert isinstance(data, dict)
    instance = data["group_list"][0]["instance_list"][0]
    instance["devices"].append(dict(instance["devices"][0]))
    with pytest.raises(RankTableError, match="is listed twice"):
        parse_rank_table(data)


def test_a_table_of_another_kind_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"servers": ["10.0.0.1"]}')
    started = time.monotonic()
    with pytest.raises(
        RankTableError, match=f"rank table {path}: not a rank table: it has no 'status'"
    ):
        read_rank_table(path, timeout=30, poll=0.05)
    assert (
        time.monotonic() - started < 15
    )  # not waited for (30 s) as if the platform were writing it


def test_read_waits_until_the_platform_completes_the_table(tmp_path: Path) -> None:
    path = tmp_path / "jobstart_hccl.json"
    path.write_text('{"status": "initializing"}')

    def complete() -> None:
        time.sleep(0.3)
        path.write_text((FIXTURES / "v1_2_a3.json").read_text())

    writer = threading.Thread(target=complete)
    writer.start()
    table = read_rank_table(path, timeout=5, poll=0.05)
    writer.join()
    assert table.version == "1.2"


def test_read_gives_up_after_the_timeout(tmp_path: Path) -> None:
    with pytest.raises(RankTableError, match=r"does not exist after waiting 0\.2s"):
        read_rank_table(tmp_path / "missing.json", timeout=0.2, poll=0.05)


def test_assemble_numbers_ranks_server_by_server() -> None:
    table = assemble([("a", [("0", "1.1.1.1"), ("1", "1.1.1.2")]), ("b", [("3", None)])])
    data = to_json(table)
    assert data["server_count"] == "2"
    assert [d["rank_id"] for s in data["server_list"] for d in s["device"]] == ["0", "1", "2"]
    assert data["server_list"][1]["device"][0] == {"device_id": "3", "rank_id": "2"}


def test_hccn_conf_addresses() -> None:
    text = (FIXTURES / "hccn_node0.conf").read_text()
    assert parse_hccn_conf(text) == {"0": "192.168.100.10", "1": "192.168.100.11"}
