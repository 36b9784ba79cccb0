"""``ascendify doctor``: is this machine ready to train on Ascend NPUs, and if not, the one-line fix.

Every check reads the real environment (package metadata, variables, files, device nodes, a child ``import torch``)
and never imports torch_npu here: on a host without CANN that import is exactly what fails.
"""

from __future__ import annotations

import ipaddress
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum
from importlib import metadata
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.launch.ranktable import RankTableError, load_rank_table
from ascendify.targets.devices import ENV_VARS
from ascendify.targets.facts import available_versions, load_facts
from ascendify.textfile import read_text

DEFAULT_ASCEND_ROOT = Path("/usr/local/Ascend")
_INSTALL_RECORD_BYTES = 2**16  # a toolkit's install record is a few lines
# A hang bound, not a speed check: on a machine whose cores are shared, importing torch has taken
# minutes.
IMPORT_TORCH_TIMEOUT = 600.0
AUTOLOAD_VARIABLE = "TORCH_DEVICE_BACKEND_AUTOLOAD"
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)\b")


class Status(str, Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class Host:
    """What the checks look at; tests point it at prepared directories and variables."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    ascend_root: Path = DEFAULT_ASCEND_ROOT
    dev_dir: Path = Path("/dev")
    python: str = sys.executable

    def installed(self, distribution: str) -> str | None:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return None


def run_checks(host: Host | None = None) -> list[Check]:
    host = host or Host()
    checks: list[Check] = []
    for check in CHECKS:
        checks.extend(check(host))
    return checks


def has_failures(checks: list[Check]) -> bool:
    return any(check.status is Status.FAIL for check in checks)


def to_json(checks: list[Check]) -> str:
    document: dict[str, Any] = {
        "ok": not has_failures(checks),
        "checks": [{**asdict(check), "status": check.status.value} for check in checks],
    }
    return json.dumps(document, indent=2)


# --- versions -------------------------------------------------------------------------------------


def check_python(host: Host) -> list[Check]:
    return [Check("python", Status.OK, f"{platform.python_version()} ({host.python})")]


def check_torch(host: Host) -> list[Check]:
    torch_version = host.installed("torch")
    if torch_version is None:
        return [Check("torch", Status.FAIL, "not installed", "pip install torch")]
    return [Check("torch", Status.OK, torch_version)]


def check_torch_npu(host: Host) -> list[Check]:
    npu_version = host.installed("torch-npu")
    if npu_version is None:
        return [
            Check(
                "torch_npu",
                Status.WARN,
                "not installed: this host cannot use an NPU (analyze and migrate still work)",
                "pip install torch-npu==<the release matching your torch>",
            )
        ]
    checks = [Check("torch_npu", Status.OK, npu_version)]
    torch_version = host.installed("torch")
    if torch_version is not None:
        checks.append(_version_match(npu_version, torch_version))
    return checks


def _version_match(npu_version: str, torch_version: str) -> Check:
    """torch_npu X.Y.Z[.postN] is built for torch X.Y.Z; the wheel's own requirement says so when we know it."""
    required = _release(npu_version)
    requirement = f"torch {required}.*"
    known = [v for v in available_versions() if _release(v) == required]
    if known:
        requirement = load_facts(known[-1]).torch_requirement or requirement
    if _release(torch_version) == required:
        return Check("torch/torch_npu", Status.OK, f"torch {torch_version} matches ({requirement})")
    return Check(
        "torch/torch_npu",
        Status.FAIL,
        f"torch {torch_version} does not match torch_npu {npu_version} ({requirement})",
        f"pip install 'torch=={required}' (or the torch_npu release built for torch {torch_version})",
    )


def _release(version: str) -> str:
    match = re.match(r"\d+\.\d+\.\d+", version)
    return match.group(0) if match else version


# --- CANN -----------------------------------------------------------------------------------------


def check_cann(host: Host) -> list[Check]:
    home = host.env.get("ASCEND_HOME_PATH") or host.env.get("ASCEND_TOOLKIT_HOME")
    set_env = _find_set_env(host.ascend_root)
    needed = host.installed("torch-npu") is not None
    if not home:
        if set_env is not None:
            return [
                Check(
                    "CANN",
                    Status.FAIL,
                    f"installed under {set_env.parent} but its environment is not loaded",
                    f"source {set_env}",
                )
            ]
        status = Status.FAIL if needed else Status.OK
        detail = "not installed" + ("" if needed else " (not needed without torch_npu)")
        fix = "install the CANN toolkit and source its set_env.sh" if needed else ""
        return [Check("CANN", status, detail, fix)]
    home_path = Path(home)
    if not home_path.is_dir():
        return [
            Check(
                "CANN",
                Status.FAIL,
                f"ASCEND_HOME_PATH={home} does not exist",
                "source the set_env.sh of an installed CANN toolkit",
            )
        ]
    version = _cann_version(home_path) or "version unknown"
    checks = [Check("CANN", Status.OK, f"{version} at {home}")]
    library_path = host.env.get("LD_LIBRARY_PATH", "")
    if str(home_path) not in library_path:
        checks.append(
            Check(
                "CANN libraries",
                Status.WARN,
                f"LD_LIBRARY_PATH does not include {home}: set_env.sh was not sourced in this shell",
                f"source {home_path / 'set_env.sh'}"
                if (home_path / "set_env.sh").exists()
                else "source the toolkit's set_env.sh",
            )
        )
    return checks


def _find_set_env(root: Path) -> Path | None:
    for candidate in (
        root / "ascend-toolkit" / "set_env.sh",
        root / "ascend-toolkit" / "latest" / "set_env.sh",
        root / "cann" / "set_env.sh",
    ):
        if candidate.is_file():
            return candidate
    return None


def _cann_version(home: Path) -> str | None:
    """The toolkit version from its install record (``version=8.0.RC3``)."""
    candidates = [
        *sorted(home.glob("*-linux/ascend_*_install.info")),
        *sorted(home.glob("ascend_*_install.info")),
        home / "version.info",
        home / "version.cfg",
    ]
    for path in candidates:
        try:
            text = read_text(path, "install record", limit=_INSTALL_RECORD_BYTES)
        except (OSError, AscendifyError):  # absent, or not a small regular UTF-8 file
            continue
        match = re.search(r"^\s*version\s*=\s*(\S+)", text, re.I | re.M)
        if match:
            return match.group(1)
    return None


def check_known_failures(host: Host) -> list[Check]:
    """Every version pair of ``ascendify explain``'s catalogue checked against this host (Python
    packages, the CANN toolkit, the driver and firmware): a failure row with the thread it was
    taken from where a known failing pair is installed, a passing row for each other rule."""
    from ascendify.explain.versions import checked_rules

    installed = {name: _installed_version(host, name) for name in _rule_names()}
    rows = []
    for checked in checked_rules(installed):
        rule = checked.rule
        if checked.holds:
            fix = f"{rule.fix} (signature {rule.signature}: {rule.source})"
            rows.append(Check(f"known failure {rule.id}", Status.FAIL, checked.describe(), fix))
        else:
            rows.append(
                Check(f"known failure {rule.id}", Status.OK, "not this host: " + checked.describe())
            )
    return rows


def _rule_names() -> list[str]:
    from ascendify.explain.catalogue import load

    return sorted({name for rule in load().version_rules for name in rule.when})


def _installed_version(host: Host, name: str) -> str | None:
    """A rule's name as installed here: the CANN toolkit, the driver, the firmware, or a Python
    distribution."""
    if name == "cann":
        home = host.env.get("ASCEND_HOME_PATH") or host.env.get("ASCEND_TOOLKIT_HOME")
        return _cann_version(Path(home)) if home else None
    if name in ("driver", "firmware"):
        return _component_version(host.ascend_root / name)
    return host.installed(name)


def _component_version(folder: Path) -> str | None:
    """The driver's or the firmware's version from its ``version.info`` (``Version=24.1.rc2``)."""
    try:
        text = read_text(folder / "version.info", "version record", limit=_INSTALL_RECORD_BYTES)
    except (OSError, AscendifyError):
        return None
    match = re.search(r"^\s*version\s*=\s*(\S+)", text, re.I | re.M)
    return match.group(1) if match else None


def check_driver(host: Host) -> list[Check]:
    """The Ascend driver and firmware versions (what the version rules are checked against)."""
    rows = []
    for name in ("driver", "firmware"):
        version = _component_version(host.ascend_root / name)
        detail = version or f"not found ({host.ascend_root / name / 'version.info'})"
        rows.append(Check(f"Ascend {name}", Status.OK, detail))
    return rows


# --- import torch and device-backend autoload -----------------------------------------------------


def check_import_torch(host: Host) -> list[Check]:
    """torch imports every ``torch.backends`` entry point at import; a torch_npu without CANN breaks it."""
    if host.installed("torch") is None:
        return [Check("import torch", Status.OK, "not tried: torch is not installed")]
    autoloaded = sorted(entry.value for entry in metadata.entry_points(group="torch.backends"))
    failure = _import_torch_error(host, dict(host.env))
    if failure is None:
        detail = "ok" + (f" (autoloads {', '.join(autoloaded)})" if autoloaded else "")
        return [Check("import torch", Status.OK, detail)]
    if autoloaded and host.env.get(AUTOLOAD_VARIABLE, "1") == "1":
        without = _import_torch_error(host, {**host.env, AUTOLOAD_VARIABLE: "0"})
        if without is None:
            return [
                Check(
                    "import torch",
                    Status.FAIL,
                    f"fails while autoloading {', '.join(autoloaded)}: {failure}",
                    f"export {AUTOLOAD_VARIABLE}=0 (or source CANN's set_env.sh so torch_npu can load)",
                )
            ]
    return [Check("import torch", Status.FAIL, failure, "reinstall torch in this environment")]


def _import_torch_error(host: Host, env: dict[str, str]) -> str | None:
    try:
        completed = subprocess.run(
            [host.python, "-c", "import torch"],
            env=env,
            capture_output=True,
            text=True,
            timeout=IMPORT_TORCH_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return (
            f"`{host.python} -c 'import torch'` did not finish within {IMPORT_TORCH_TIMEOUT:.0f} s"
        )
    if completed.returncode == 0:
        return None
    return _error_summary(completed.stderr) or f"exit code {completed.returncode}"


def _error_summary(stderr: str) -> str:
    """The final error of a traceback, with the first (root) error when exceptions were chained."""
    errors = [line.strip() for line in stderr.splitlines() if _EXCEPTION_LINE.match(line)]
    if not errors:
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        return lines[-1] if lines else ""
    if len(errors) > 1 and errors[0] != errors[-1]:
        return f"{errors[-1]} (caused by {errors[0]})"
    return errors[-1]


# --- devices --------------------------------------------------------------------------------------


def check_devices(host: Host) -> list[Check]:
    devices = sorted(
        int(path.name.removeprefix("davinci"))
        for path in host.dev_dir.glob("davinci[0-9]*")
        if path.name.removeprefix("davinci").isdigit()
    )
    needed = host.installed("torch-npu") is not None
    if not devices:
        status = Status.FAIL if needed else Status.OK
        fix = "run on an Ascend host, or mount the devices into the container" if needed else ""
        return [Check("NPU devices", status, f"none in {host.dev_dir}", fix)]
    checks = [Check("NPU devices", Status.OK, f"{len(devices)} visible: {devices}")]
    visible = host.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if visible is not None:
        checks.append(_visible_devices(visible, len(devices)))
    return checks


def _visible_devices(value: str, count: int) -> Check:
    ids = [item.strip() for item in value.split(",") if item.strip()]
    bad = [item for item in ids if not item.isdigit() or int(item) >= count]
    if not ids or bad:
        return Check(
            "ASCEND_RT_VISIBLE_DEVICES",
            Status.FAIL,
            f"{value!r} names devices that do not exist (this host has 0..{count - 1})",
            f"export ASCEND_RT_VISIBLE_DEVICES={','.join(str(i) for i in range(count))}",
        )
    return Check("ASCEND_RT_VISIBLE_DEVICES", Status.OK, value)


# --- distributed variables ------------------------------------------------------------------------


def check_rank_table(host: Host) -> list[Check]:
    path_text = host.env.get("RANK_TABLE_FILE")
    if not path_text:
        return [Check("RANK_TABLE_FILE", Status.OK, "not set (torchrun-style rendezvous)")]
    problem = _rank_table_problem(Path(path_text))
    if problem is None:
        return [Check("RANK_TABLE_FILE", Status.OK, path_text)]
    return [
        Check(
            "RANK_TABLE_FILE",
            Status.FAIL,
            problem,
            "regenerate the rank table (or unset RANK_TABLE_FILE to use torchrun-style rendezvous)",
        )
    ]


def _rank_table_problem(path: Path) -> str | None:
    """What is wrong with the table in ``path``, naming the file; read within the input limits."""
    try:
        table = load_rank_table(path)
    except FileNotFoundError:
        return f"rank table {path} does not exist"
    except json.JSONDecodeError as error:
        return f"rank table {path} is not valid JSON ({error})"
    except RankTableError as error:
        return str(error)
    for server in table.servers:
        if any(device.device_ip is None for device in server.devices):
            return f"rank table {path}: a device of server {server.server_id!r} lacks device_ip"
    return None


_POSITIVE_SECONDS = ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT")


def check_hccl_variables(host: Host) -> list[Check]:
    checks: list[Check] = []
    for name in _POSITIVE_SECONDS:
        value = host.env.get(name)
        if value is not None and not (value.isdigit() and int(value) > 0):
            checks.append(
                Check(
                    name,
                    Status.FAIL,
                    f"{value!r} is not a whole number of seconds",
                    f"export {name}=1800",
                )
            )
    connect, execute = (host.env.get(name, "") for name in _POSITIVE_SECONDS)
    if connect.isdigit() and execute.isdigit() and int(execute) < int(connect):
        checks.append(
            Check(
                "HCCL timeouts",
                Status.WARN,
                f"HCCL_EXEC_TIMEOUT {execute} < HCCL_CONNECT_TIMEOUT {connect}: link failures show up as "
                "notify-wait timeouts",
                f"export HCCL_EXEC_TIMEOUT={connect}",
            )
        )
    checks.extend(_hccl_address_checks(host.env))
    if not checks:
        looked = [*_POSITIVE_SECONDS, "HCCL_IF_IP", "HCCL_IF_BASE_PORT", "RANK_ID", "RANK_SIZE"]
        shown = ", ".join(f"{name}={host.env[name]}" for name in looked if name in host.env)
        checks.append(Check("HCCL variables", Status.OK, shown or "none set (defaults)"))
    return checks


def _hccl_address_checks(env: Mapping[str, str]) -> list[Check]:
    checks: list[Check] = []
    address = env.get("HCCL_IF_IP")
    if address is not None:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            checks.append(
                Check(
                    "HCCL_IF_IP",
                    Status.FAIL,
                    f"{address!r} is not an IP address",
                    "export HCCL_IF_IP=<this node's IP>",
                )
            )
    port = env.get("HCCL_IF_BASE_PORT")
    if port is not None and not (port.isdigit() and 1024 <= int(port) <= 65535 - 64):
        checks.append(
            Check(
                "HCCL_IF_BASE_PORT",
                Status.FAIL,
                f"{port!r} is not a free-port range start",
                "unset HCCL_IF_BASE_PORT",
            )
        )
    rank, size = env.get("RANK_ID"), env.get("RANK_SIZE")
    if (
        rank is not None
        and size is not None
        and not (rank.isdigit() and size.isdigit() and int(rank) < int(size))
    ):
        checks.append(
            Check(
                "RANK_ID/RANK_SIZE",
                Status.FAIL,
                f"RANK_ID={rank!r} RANK_SIZE={size!r}",
                "let `ascendify run` set them",
            )
        )
    return checks


def check_cuda_variables(host: Host) -> list[Check]:
    """CUDA-named variables do nothing on an NPU; say which Ascend variable does the job."""
    if host.installed("torch-npu") is None:
        return [Check("CUDA variables", Status.OK, "not checked: torch_npu is not installed")]
    checks: list[Check] = []
    for target in ENV_VARS:
        if target.cuda in host.env and (target.npu is None or target.npu not in host.env):
            fix = f"export {target.npu}={host.env[target.cuda]}" if target.npu else target.note
            checks.append(Check(target.cuda, Status.WARN, "set, but has no effect on an NPU", fix))
    return checks or [Check("CUDA variables", Status.OK, "none set without its Ascend equivalent")]


CHECKS: tuple[Callable[[Host], list[Check]], ...] = (
    check_python,
    check_torch,
    check_torch_npu,
    check_cann,
    check_driver,
    check_known_failures,
    check_import_torch,
    check_devices,
    check_rank_table,
    check_hccl_variables,
    check_cuda_variables,
)


def print_checks(checks: list[Check]) -> None:
    from rich.table import Table

    from ascendify._console import console

    colours = {Status.OK: "green", Status.WARN: "yellow", Status.FAIL: "red"}
    table = Table(title="ascendify doctor")
    for column in ("Status", "Check", "Detail", "Fix"):
        table.add_column(column, overflow="fold")
    for check in checks:
        status = f"[{colours[check.status]}]{check.status.value}[/]"
        table.add_row(status, check.name, check.detail, check.fix)
    console(highlight=False).print(table)
