"""Broken or hostile launcher inputs end in one message naming the input, never a traceback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.launch import LaunchOptions, resolve_spec
from ascendify.limits import MAX_DEVICES_PER_SERVER
from tests.conftest import HANG_BOUND, RunCli

PATH = {"PATH": os.environ["PATH"]}


def options(**given: object) -> LaunchOptions:
    return LaunchOptions(command=("python", "train.py"), **given)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "env", "message"),
    [
        ({"master_port": 99999}, {}, "--master-port must be a TCP port, 1-65535, got 99999$"),
        ({"master_port": 0}, {}, "1-65535, got 0$"),
        ({}, {"MASTER_PORT": "70000"}, r"got 70000 \(from local: MASTER_PORT\)"),
        ({}, {"MASTER_PORT": "http"}, "--master-port must be a whole number, got 'http'"),
        ({"nnodes": 0}, {}, "--nnodes must be at least 1, got 0$"),
        ({"nnodes": -3}, {}, "--nnodes must be at least 1, got -3$"),
        (
            {"nproc_per_node": str(MAX_DEVICES_PER_SERVER + 1)},
            {},
            f"asks for {MAX_DEVICES_PER_SERVER + 1} ranks on this node; at most {MAX_DEVICES_PER_SERVER}",
        ),
        *(
            (
                {"grace_period": value},
                {},
                f"--grace-period must be a number of seconds from 0 to 3600, got {shown}$",
            )
            for value, shown in ((float("inf"), "inf"), (float("nan"), "nan"), (-1.0, "-1.0"))
        ),
        (
            {"join_timeout": -1.0},
            {},
            "--join-timeout must be a number of seconds from above 0 to 86400, got -1.0$",
        ),
        ({"join_timeout": 0.0}, {}, "--join-timeout .* from above 0 to 86400, got 0.0$"),
        ({"upload_interval": float("nan")}, {}, "--upload-interval .* from 0 to 86400, got nan$"),
        ({"upload_interval": -5.0}, {}, "--upload-interval .* from 0 to 86400, got -5.0$"),
    ],
)
def test_limits_are_named(given: dict[str, object], env: dict[str, str], message: str) -> None:
    with pytest.raises(AscendifyError, match=message):
        resolve_spec(options(**given), {**PATH, **env})


def npu_root(tmp_path: Path, cards: int) -> Path:
    (tmp_path / "dev").mkdir()
    for index in range(cards):
        (tmp_path / "dev" / f"davinci{index}").touch()
    return tmp_path


def test_more_ranks_than_cards_is_refused(tmp_path: Path) -> None:
    root = npu_root(tmp_path, 8)
    with pytest.raises(AscendifyError, match=r"asks for 16 ranks on this node but it has 8 NPU"):
        resolve_spec(options(nproc_per_node="16"), PATH, root)
    assert resolve_spec(options(nproc_per_node="8"), PATH, root).nproc_per_node == 8


def server_table(devices: int) -> dict[str, object]:
    listed = [{"device_id": str(i), "rank_id": str(i)} for i in range(devices)]
    return {
        "status": "completed",
        "version": "1.0",
        "server_count": "1",
        "server_list": [{"server_id": "10.0.0.1", "device": listed}],
    }


def test_a_rank_table_listing_a_huge_server_is_refused_quickly(tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    table.write_text(json.dumps(server_table(100_000)))
    started = time.monotonic()
    with pytest.raises(AscendifyError, match=r"server 10\.0\.0\.1 lists 100000 devices; a server"):
        resolve_spec(options(), {**PATH, "RANK_TABLE_FILE_V_1_0": str(table)}, tmp_path)
    assert time.monotonic() - started < 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.json"]


def test_a_rank_table_with_more_devices_than_the_node_has_is_refused(tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    table.write_text(json.dumps(server_table(16)))
    env = {**PATH, "RANK_TABLE_FILE_V_1_0": str(table)}
    with pytest.raises(AscendifyError, match="asks for 16 ranks on this node but it has 8 NPU"):
        resolve_spec(options(), env, npu_root(tmp_path, 8))


def test_a_rank_table_naming_a_device_this_node_lacks_is_refused(tmp_path: Path) -> None:
    table = server_table(2)
    table["server_list"][0]["device"][1]["device_id"] = "9"  # type: ignore[index]
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    env = {**PATH, "RANK_TABLE_FILE_V_1_0": str(path)}
    with pytest.raises(
        AscendifyError, match=r"'device_id' of server 10\.0\.0\.1: device 9 is not on"
    ):
        resolve_spec(options(), env, npu_root(tmp_path, 8))


def hostile_file(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"input-{kind}"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer forever
    elif kind == "latin-1":
        path.write_bytes("address_0=10.0.0.1 # caf\xe9\n".encode("latin-1"))
    elif kind == "deep":
        path.write_text("[" * 200_000 + "]" * 200_000)
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(17 * 2**20)
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("directory", "is a directory"),
        ("fifo", "is not a regular file"),
        ("latin-1", r"is not UTF-8 text \(byte 0xe9 at offset 24\)"),
        ("deep", "is nested too deeply"),
        ("huge", "is larger than 16 MiB"),
    ],
)
def test_unusable_rank_tables_are_named_at_once(tmp_path: Path, kind: str, message: str) -> None:
    path = hostile_file(tmp_path, kind)
    started = time.monotonic()
    with pytest.raises(AscendifyError, match=f"rank table {path} {message}"):
        resolve_spec(options(join_timeout=30), {**PATH, "RANK_TABLE_FILE_V_1_0": str(path)})
    assert time.monotonic() - started < 15  # no waiting (30 s) for a platform to finish writing it


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "does not exist"),
        ("directory", "is a directory"),
        ("fifo", "is not a regular file"),
        ("latin-1", r"is not UTF-8 text \(byte 0xe9 at offset 24\)"),
    ],
)
def test_unusable_hccn_conf_is_named(tmp_path: Path, kind: str, message: str) -> None:
    path = hostile_file(tmp_path, kind)
    with pytest.raises(AscendifyError, match=f"--hccn-conf {path} {message}"):
        resolve_spec(options(hccn_conf=path), PATH)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flags", "env", "names"),
    [
        (["--master-port", "99999"], {}, "99999"),
        (["--nnodes", "0"], {}, "--nnodes"),
        (["--hccn-conf", "{tmp}/input-latin-1"], {}, "input-latin-1"),
        ([], {"RANK_TABLE_FILE_V_1_0": "{tmp}/input-deep"}, "input-deep"),
        ([], {"RANK_TABLE_FILE_V_1_0": "{tmp}/input-fifo"}, "input-fifo"),
    ],
)
def test_the_command_line_says_it_in_one_line(
    run_cli: RunCli, tmp_path: Path, flags: list[str], env: dict[str, str], names: str
) -> None:
    for kind in ("latin-1", "deep", "fifo"):
        hostile_file(tmp_path, kind)
    result = run_cli(
        ["run", *(flag.format(tmp=tmp_path) for flag in flags), "python", "-c", "pass"],
        env={name: value.format(tmp=tmp_path) for name, value in env.items()},
        timeout=HANG_BOUND,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("ascendify run: error: ")
    assert names in result.stderr
