from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascendify.doctor import (
    Host,
    Status,
    _version_match,
    check_cann,
    check_devices,
    check_hccl_variables,
    check_rank_table,
)
from tests.conftest import SRC, RunCli


def _fake_torch_npu(site: Path, version: str) -> None:
    """An installed torch_npu whose native libraries cannot load, as on a host without CANN."""
    dist = site / f"torch_npu-{version}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch_npu\nVersion: {version}\n")
    (dist / "entry_points.txt").write_text("[torch.backends]\ntorch_npu = torch_npu:_autoload\n")
    package = site / "torch_npu"
    package.mkdir()
    (package / "__init__.py").write_text(
        "raise ImportError('libascendcl.so: cannot open shared object file: No such file or directory')\n"
    )


def _checks(stdout: str) -> dict[str, dict[str, str]]:
    return {check["name"]: check for check in json.loads(stdout)["checks"]}


@pytest.mark.slow
def test_torch_npu_without_cann_breaks_import_torch_and_doctor_names_the_fix(
    tmp_path: Path, run_cli: RunCli
) -> None:
    _fake_torch_npu(tmp_path, "2.13.0")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(SRC)]), "CUDA_VISIBLE_DEVICES": "1"}
    result = run_cli(["doctor", "--json"], env=env)
    assert result.returncode == 1, result.stderr
    checks = _checks(result.stdout)
    trap = checks["import torch"]
    assert trap["status"] == "fail"
    assert "libascendcl.so" in trap["detail"]
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in trap["fix"]
    assert checks["torch_npu"]["detail"] == "2.13.0"
    assert checks["CANN"]["status"] == "fail"
    cuda_variable = checks["CUDA_VISIBLE_DEVICES"]
    assert (cuda_variable["status"], cuda_variable["fix"]) == (
        "warn",
        "export ASCEND_RT_VISIBLE_DEVICES=1",
    )

    fixed = run_cli(["doctor", "--json"], env={**env, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert _checks(fixed.stdout)["import torch"]["status"] == "ok"


@pytest.mark.slow
def test_doctor_passes_on_a_plain_cpu_host(run_cli: RunCli) -> None:
    result = run_cli(["doctor", "--json"], env={"RANK_TABLE_FILE": ""})
    document = json.loads(result.stdout)
    failed = [check for check in document["checks"] if check["status"] == "fail"]
    assert (result.returncode, failed) == (0, [])
    assert _checks(result.stdout)["import torch"]["status"] == "ok"


@pytest.mark.slow
def test_doctor_prints_a_row_for_every_check_it_made_passing_ones_included(
    run_cli: RunCli,
) -> None:
    env = {"RANK_TABLE_FILE": "", "ASCEND_HOME_PATH": ""}
    rows = _checks(run_cli(["doctor", "--json"], env=env).stdout)
    passing = {"RANK_TABLE_FILE", "HCCL variables", "CUDA variables", "Ascend driver",
               "Ascend firmware", "known failure VER001", "known failure VER007"}  # fmt: skip
    assert passing <= set(rows), sorted(rows)
    assert {rows[name]["status"] for name in passing} == {"ok"}
    text = run_cli(["doctor"], env=env).stdout
    for name in passing:
        assert name in text


def test_torch_npu_must_be_built_for_the_installed_torch() -> None:
    assert _version_match("2.13.0", "2.13.0+cpu").status is Status.OK
    mismatch = _version_match("2.8.0", "2.13.0+cpu")
    assert mismatch.status is Status.FAIL
    assert "torch==2.8.0+cpu" in mismatch.detail  # the wheel's own requirement
    assert "torch==2.8.0" in mismatch.fix
    assert _version_match("2.9.0.post1", "2.9.0").status is Status.OK  # no facts, release rule


GOOD_TABLE = {
    "status": "completed",
    "version": "1.0",
    "server_count": "1",
    "server_list": [
        {
            "server_id": "10.0.0.1",
            "device": [
                {"device_id": "0", "device_ip": "192.168.100.1", "rank_id": "0"},
                {"device_id": "1", "device_ip": "192.168.100.2", "rank_id": "1"},
            ],
        }
    ],
}


def _with_table(tmp_path: Path, content: str) -> Host:
    path = tmp_path / "rank_table.json"
    path.write_text(content, encoding="utf-8")
    return Host(env={"RANK_TABLE_FILE": str(path)})


def _table(**changes: object) -> str:
    return json.dumps({**GOOD_TABLE, **changes})


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        (_table(status="initializing"), "not 'completed'"),
        (_table(server_count="2"), "server_count is 2"),
        (
            _table(
                server_list=[{"server_id": "a", "device": [{"device_id": "0", "rank_id": "0"}]}]
            ),
            "lacks device_ip",
        ),
        (
            _table(
                server_list=[
                    {
                        "server_id": "a",
                        "device": [
                            {"device_id": "0", "device_ip": "1.1.1.1", "rank_id": "0"},
                            {"device_id": "1", "device_ip": "1.1.1.2", "rank_id": "0"},
                        ],
                    }
                ]
            ),
            "rank ids [0, 0]",
        ),
        (json.dumps({"status": "completed"}), "unknown rank table format"),
    ],
)
def test_bad_rank_tables_are_explained(tmp_path: Path, content: str, problem: str) -> None:
    [check] = check_rank_table(_with_table(tmp_path, content))
    assert check.status is Status.FAIL
    assert problem in check.detail


def test_a_valid_rank_table_and_a_missing_one(tmp_path: Path) -> None:
    [good] = check_rank_table(_with_table(tmp_path, _table()))
    assert good.status is Status.OK
    [missing] = check_rank_table(Host(env={"RANK_TABLE_FILE": str(tmp_path / "absent.json")}))
    assert (missing.status, "absent.json does not exist" in missing.detail) == (Status.FAIL, True)


def test_an_install_record_that_is_no_small_file_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "version.info")  # reading it would wait for a writer forever
    with (tmp_path / "version.cfg").open("w") as huge:  # endless in effect: never read whole
        huge.write("version=8.0.RC3\n")
        huge.truncate(2**40)
    [check] = check_cann(
        Host(env={"ASCEND_HOME_PATH": str(tmp_path), "LD_LIBRARY_PATH": str(tmp_path)})
    )
    assert (check.status, check.detail) == (Status.OK, f"version unknown at {tmp_path}")


def test_cann_version_is_read_from_the_install_record(tmp_path: Path) -> None:
    record = tmp_path / "x86_64-linux" / "ascend_toolkit_install.info"
    record.parent.mkdir()
    record.write_text("package_name=Ascend-cann-toolkit\nversion=8.0.RC3\narch=x86_64\n")
    env = {"ASCEND_HOME_PATH": str(tmp_path), "LD_LIBRARY_PATH": f"{tmp_path}/lib64"}
    [check] = check_cann(Host(env=env))
    assert (check.status, check.detail) == (Status.OK, f"8.0.RC3 at {tmp_path}")
    statuses = [c.status for c in check_cann(Host(env={"ASCEND_HOME_PATH": str(tmp_path)}))]
    assert statuses == [Status.OK, Status.WARN]  # installed, but set_env.sh not sourced here


def test_cann_installed_but_not_sourced(tmp_path: Path) -> None:
    set_env = tmp_path / "ascend-toolkit" / "set_env.sh"
    set_env.parent.mkdir()
    set_env.write_text("export ASCEND_HOME_PATH=...\n")
    [check] = check_cann(Host(env={}, ascend_root=tmp_path))
    assert check.status is Status.FAIL
    assert check.fix == f"source {set_env}"


def test_visible_devices_must_exist(tmp_path: Path) -> None:
    for name in ("davinci0", "davinci1", "davinci_manager", "devmm_svm"):
        (tmp_path / name).touch()
    checks = check_devices(Host(env={"ASCEND_RT_VISIBLE_DEVICES": "0,3"}, dev_dir=tmp_path))
    assert [c.status for c in checks] == [Status.OK, Status.FAIL]
    assert checks[0].detail == "2 visible: [0, 1]"
    assert "ASCEND_RT_VISIBLE_DEVICES=0,1" in checks[1].fix


def test_hccl_variables_are_checked() -> None:
    env = {
        "HCCL_CONNECT_TIMEOUT": "600",
        "HCCL_EXEC_TIMEOUT": "120",
        "HCCL_IF_IP": "10.0.0.300",
        "RANK_ID": "8",
        "RANK_SIZE": "8",
    }
    checks = {check.name: check.status for check in check_hccl_variables(Host(env=env))}
    assert checks == {
        "HCCL timeouts": Status.WARN,
        "HCCL_IF_IP": Status.FAIL,
        "RANK_ID/RANK_SIZE": Status.FAIL,
    }
    [bad] = check_hccl_variables(Host(env={"HCCL_CONNECT_TIMEOUT": "2m"}))
    assert (bad.name, bad.status) == ("HCCL_CONNECT_TIMEOUT", Status.FAIL)
    [fine] = check_hccl_variables(Host(env={"HCCL_CONNECT_TIMEOUT": "1200"}))
    assert (fine.name, fine.status, fine.detail) == (
        "HCCL variables", Status.OK, "HCCL_CONNECT_TIMEOUT=1200",
    )  # fmt: skip


def _hostile_table(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"table-{kind}"
    if kind == "fifo":
        os.mkfifo(path)  # an open for reading would wait for a writer forever
    elif kind == "zero":
        path.symlink_to("/dev/zero")  # endless: read to the end, it fills the memory
    elif kind == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "deep-within-recursion":
        path.write_text('{"status": "completed", "x": ' + "[" * 500 + "]" * 500 + "}")
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(17 * 2**20)
    elif kind == "foreign":
        path.write_text('{"servers": [{"ip": "10.0.0.1"}]}')
    elif kind == "many":  # 2 MB of text, 100 MB of objects once parsed
        path.write_text("[" + "{}," * 1_000_000 + "{}]")
    return path


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("fifo", "is not a regular file"),
        ("zero", "is not a regular file"),
        ("deep", "is nested too deeply"),
        ("deep-within-recursion", "is nested too deeply (more than 32 levels)"),
        ("huge", "is larger than 16 MiB"),
        ("foreign", ": not a rank table: it has no 'status' field"),
        ("many", "holds more than 1,000,000 values"),
    ],
)
def test_unusable_rank_tables_are_named_at_once(tmp_path: Path, kind: str, problem: str) -> None:
    path = _hostile_table(tmp_path, kind)
    [check] = check_rank_table(Host(env={"RANK_TABLE_FILE": str(path)}))
    assert check.status is Status.FAIL
    assert check.detail.startswith(f"rank table {path}"), check.detail
    assert problem in check.detail


@pytest.mark.slow
def test_doctor_names_a_fifo_rank_table_and_ends(tmp_path: Path, run_cli: RunCli) -> None:
    path = _hostile_table(tmp_path, "fifo")
    result = run_cli(["doctor", "--json"], env={"RANK_TABLE_FILE": str(path)})
    assert result.returncode == 1, result.stderr  # a failed check, not a crash (3) or a hang
    detail = _checks(result.stdout)["RANK_TABLE_FILE"]["detail"]
    assert detail == f"rank table {path} is not a regular file"
