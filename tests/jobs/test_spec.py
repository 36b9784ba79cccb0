"""Job specs from files and flags; ``job validate`` names the bad field (exit 2)."""

from __future__ import annotations

import itertools
import os
import socket
import time
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.plan import agent_argv
from ascendify.jobs.spec import (
    REDACTED,
    JobSpec,
    SpecError,
    is_secret_name,
    load_spec_file,
    pairs,
    resolve,
    secret_hyperparameters,
    shown_spec,
)
from tests.jobs.conftest import JobCli


def test_toml_and_yaml_give_the_same_spec(project: Path) -> None:
    (project / "a.toml").write_text(
        'boot_file = "rank.py"\nnodes = 2\nflavor = "Ascend: 8 | ARM: 192 cores 720 GB"\n'
        'data_url = "s3://bucket/data/"\n[hyper]\nlr = 0.1\nfast = true\n[env]\nMY_FLAG = "1"\n'
    )
    (project / "a.yaml").write_text(
        "boot_file: rank.py\nnodes: 2\nflavor: 'Ascend: 8 | ARM: 192 cores 720 GB'\n"
        "data_url: s3://bucket/data/\nhyper: {lr: 0.1, fast: true}\nenv: {MY_FLAG: '1'}\n"
    )
    toml, yaml = (resolve(load_spec_file(project / name)) for name in ("a.toml", "a.yaml"))
    assert toml == yaml
    assert (toml.code_dir, toml.name, toml.cards, toml.nodes) == (project, "rank", 8, 2)
    command = toml.command("python", Path("/snap"))
    assert command == (
        "python", "/snap/rank.py", "--lr=0.1", "--fast=true", "--data_url=s3://bucket/data/"
    )  # fmt: skip


def test_module_and_command_forms(project: Path) -> None:
    base = {"code_dir": str(project)}
    module = resolve({**base, "boot_file": "pkg.train", "module": True, "hyper": {"a": 1}})
    assert module.command("py", project) == ("py", "-m", "pkg.train", "--a=1")
    verbatim = resolve({**base, "boot_file": "bash run.sh x", "no_python": True})
    assert verbatim.command("py", project) == ("bash", "run.sh", "x")
    auto = resolve({**base, "boot_file": "rank.py", "auto": True})
    assert auto.command("py", project) == ("py", "-m", "ascendify.auto", f"{project}/rank.py")


def test_boot_command_runs_a_whole_command_line_in_the_job_dir(project: Path) -> None:
    spec = resolve(
        {"code_dir": str(project), "boot_command": "accelerate launch --num_processes 2 "
         "'my train.py' --epochs 3", "hyper": {"lr": 0.1}}
    )  # fmt: skip
    assert spec.command("py", Path("/snap")) == (
        "accelerate", "launch", "--num_processes", "2", "my train.py", "--epochs", "3", "--lr=0.1",
    )  # fmt: skip
    assert (spec.boot_file, spec.name) == ("", "my-train")
    layout = JobLayout(Path("/jobs/j1"), "j1")
    argv = agent_argv(spec, layout, node=0, addresses=("127.0.0.1",), master_port=1, python="py")
    at = argv.index("--cwd")
    # As on ModelArts: relative paths of the command line start in the node's job dir, which
    # holds the code under its own name ("code", the fixture's folder).
    assert argv[at + 1] == "/jobs/j1/work/worker-0/user-job-dir"
    assert argv[-8:-6] == ("accelerate", "launch")
    assert JobSpec.from_json(spec.to_json()) == spec
    assert spec.code_folder == project.name == "code"
    plain = resolve({"code_dir": str(project), "boot_file": "rank.py"})
    assert plain.boot_command is None
    argv = agent_argv(plain, layout, node=1, addresses=("a", "b"), master_port=1, python="py")
    assert argv[argv.index("--cwd") + 1] == "/jobs/j1/work/worker-1/user-job-dir"
    # The boot file by its absolute path in the job dir, as ModelArts passes it.
    assert argv[-1] == "/jobs/j1/work/worker-1/user-job-dir/code/rank.py"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"boot_file": "rank.py"}, "boot_command: give boot_command or boot_file, not both"),
        ({"module": True}, "boot_command: a command line: module, no_python and auto do not apply"),
        ({"boot_command": "  "}, "boot_command: expected a command line, got"),
        (
            {"boot_command": "python 'unclosed"},
            'boot_command: "python \'unclosed": No closing quotation',
        ),
    ],
)
def test_bad_boot_commands_are_named(project: Path, extra: dict[str, object], message: str) -> None:
    raw = {"code_dir": str(project), "boot_command": "deepspeed train.py", **extra}
    with pytest.raises(SpecError) as raised:
        resolve(raw)
    assert str(raised.value).startswith(message)
    assert raised.value.field == "boot_command"


def test_credentials_in_env_are_not_kept(project: Path) -> None:
    spec = resolve(
        {"code_dir": str(project), "boot_file": "rank.py",
         "env": {"AWS_SECRET_ACCESS_KEY": "abc", "HF_TOKEN": "t", "LEVEL": "3"}}
    )  # fmt: skip
    stored = spec.to_json()
    assert stored["env"] == {"AWS_SECRET_ACCESS_KEY": REDACTED, "HF_TOKEN": REDACTED, "LEVEL": "3"}
    assert JobSpec.from_json(stored).env == {"LEVEL": "3"}


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_PAT", "OPENAI_API_KEY", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "DB_PASSWORD", "MY_SECRET", "SSH_PRIVATE_KEY",
        "HF_TOKEN", "AZURE_CREDENTIALS", "STRIPE_KEY", "pat", "password", "api_key",
        "DB_PASS", "AUTH", "COOKIE", "SSH_PRIVATE", "HTTP_AUTHORIZATION", "PROXY_AUTH",
        "SESSION_COOKIE", "OAUTH_CLIENT", "DOCKER_CREDS", "GPG_PASSPHRASE",
    ],
)  # fmt: skip
def test_secret_shaped_names_are_never_stored(project: Path, name: str) -> None:
    spec = resolve({"code_dir": str(project), "boot_file": "rank.py", "env": {name: "v4lue"}})
    assert spec.env == {name: "v4lue"}  # the ranks get it
    assert spec.to_json()["env"] == {name: REDACTED}
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["LEVEL", "KEYBOARD", "PATH", "HF_HOME", "KEY_FILE", "PATTERN", "AUTHOR", "PASSES"]
)
def test_ordinary_names_are_kept(name: str) -> None:
    assert not is_secret_name(name)


def test_env_names_alone_take_their_value_from_the_environment() -> None:
    environment = {"HF_TOKEN": "from-the-shell"}
    given = pairs(["HF_TOKEN", "LEVEL=3"], "env", environment)
    assert given == {"HF_TOKEN": "from-the-shell", "LEVEL": "3"}
    with pytest.raises(SpecError, match="env: MISSING is not set in this environment"):
        pairs(["MISSING"], "env", environment)
    with pytest.raises(SpecError, match="hyper: expected KEY=VALUE, got 'lr'"):
        pairs(["lr"], "hyper")


@pytest.mark.parametrize("what", ["hyper", "env"])
def test_a_name_with_a_line_break_is_refused_in_one_line(what: str) -> None:
    """Printed, such a name once forged a console line of its own."""
    with pytest.raises(SpecError) as refused:
        pairs(["lr\nascendify job: job 1 succeeded=1"], what, {} if what == "env" else None)
    assert "is not a usable name" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_rerun_needs_every_secret_of_the_env(project: Path, tmp_path: Path) -> None:
    """A secret's value is never stored: a rerun once went without it, saying nothing."""
    from ascendify.errors import AscendifyError
    from ascendify.jobs.service import rerun
    from ascendify.jobs.store import JobStore

    store = JobStore(tmp_path / "store")
    spec = resolve({"code_dir": str(project), "boot_file": "rank.py", "env": {"DB_PASS": "pw"}})
    old = store.create(spec.to_json())
    with pytest.raises(AscendifyError, match="had DB_PASS in its env, whose value is never stored"):
        rerun(store, old.id, environment={"OTHER": "1"})
    assert [job.id for job in store.jobs()] == [old.id]  # nothing submitted


def test_secret_shaped_hyperparameters_are_named() -> None:
    assert secret_hyperparameters({"lr": "0.1", "password": "x", "wandb_api_key": "y"}) == [
        "password",
        "wandb_api_key",
    ]


@pytest.mark.parametrize(
    ("fields", "field", "why"),
    [
        ({}, "boot_file", "required"),
        ({"boot_file": "missing.py"}, "boot_file", "not found in code_dir"),
        ({"boot_file": "rank.py", "bootfile": "x"}, "bootfile", "did you mean 'boot_file'"),
        ({"boot_file": "rank.py", "nodes": 0}, "nodes", "from 1 to 1024, got 0"),
        ({"boot_file": "rank.py", "cards": "two"}, "cards", "whole number"),
        ({"boot_file": "rank.py", "flavor": "big machine"}, "flavor", "KIND: DETAILS"),
        ({"boot_file": "rank.py", "flavor": "Ascend: 8", "cards": 4}, "cards", "disagrees"),
        ({"boot_file": "rank.py", "engine": "slurm"}, "engine", "not one of"),
        ({"boot_file": "rank.py", "engine": "volcano"}, "image", "container image"),
        ({"boot_file": "rank.py", "data_url": "ftp://x/y"}, "data_url", "unsupported scheme"),
        ({"boot_file": "rank.py", "hyper": ["lr"]}, "hyper", "table"),
        ({"boot_file": "rank.py", "name": "a b"}, "name", "letters"),
        ({"boot_file": "rank.py", "module": True, "auto": True}, "module", "exclude"),
        *(
            (
                {"boot_file": "rank.py", "grace_period": value},
                "grace_period",
                f"to 3600, got {shown}",
            )
            for value, shown in (
                (float("inf"), "inf"),
                (float("nan"), "nan"),
                (-1, "-1"),
                (1e9, "1000000000.0"),
            )
        ),
        ({"boot_file": "rank.py", "cards": 1_000_000}, "cards", "from 1 to 64, got 1000000"),
        ({"boot_file": "rank.py", "cards": "1000000"}, "cards", "from 1 to 64, got 1000000"),
        ({"boot_file": "rank.py", "flavor": "Ascend: 1000000"}, "flavor", "at most 64"),
        ({"boot_file": "rank.py", "nodes": 300}, "nodes", "engine local runs at most 254 nodes"),
        ({"boot_file": "rank.py", "nodes": 5000, "engine": "ray"}, "nodes", "1 to 1024, got 5000"),
        ({"boot_file": "rank.py", "nodes": 8, "cards": 64}, "cards", "at most 256 ranks"),
        ({"boot_file": "../rank.py"}, "boot_file", r"leaves code_dir .* \('\.\.'\)"),
        ({"boot_file": "sub/../../rank.py"}, "boot_file", "leaves code_dir"),
        ({"boot_file": "rank.py", "env": {"BIG": "x" * 20_000_000}}, "env", "BIG: 20000004 bytes"),
        (
            {"boot_file": "rank.py", "env": {f"V{i}": "x" * 100_000 for i in range(6)}},
            "env",
            "at most 524288 fit",
        ),
        (
            {"boot_file": "rank.py", "data_url": "/data", "hyper": {"data_url": "/other"}},
            "hyper",
            "data_url is given twice",
        ),
        ({"boot_file": "rank.py", "name": ["a"] * 10_000}, "name", r"expected text, got \['a', "),
        ({"boot_file": "rank.py", "metrics": {"acc": "([0-9"}}, "metrics", "acc: .* not a regular"),
        ({"boot_file": "rank.py", "metrics": ["acc"]}, "metrics", "table of NAME = 'REGEX'"),
    ],
)
def test_bad_fields_are_named(
    project: Path, fields: dict[str, object], field: str, why: str
) -> None:
    with pytest.raises(SpecError, match=why) as raised:
        resolve({"code_dir": str(project), **fields})
    assert raised.value.field == field


def _nested(suffix: str, depth: int) -> str:
    if suffix == ".toml":
        return "boot_file = 'rank.py'\n[hyper]\nx = " + "[" * depth + "]" * depth + "\n"
    return '{"boot_file": "rank.py", "hyper": {"x": ' + "[" * depth + "]" * depth + "}}"


@pytest.mark.parametrize("suffix", [".toml", ".yaml", ".json"])
@pytest.mark.parametrize("depth", [40, 3_000])  # within Python's recursion, and past it
def test_deeply_nested_specs_are_refused(project: Path, suffix: str, depth: int) -> None:
    path = project / f"job{suffix}"
    path.write_text(_nested(suffix, depth))
    # libyaml stops at 1,000 levels itself
    deep = "(is nested too deeply|cannot be read: .*exceeded maximum nesting depth)"
    with pytest.raises(AscendifyError, match=f"spec file {path} {deep}"):
        load_spec_file(path)


def test_a_yaml_alias_bomb_is_refused_quickly(project: Path) -> None:
    lines = ["boot_file: rank.py", "env:", "  a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    (project / "bomb.yaml").write_text("\n".join([*lines, "nodes: *a9", ""]))
    started = time.monotonic()
    with pytest.raises(SpecError, match=r"nodes: must be a whole number from 1 to 1024, got \[\["):
        resolve(load_spec_file(project / "bomb.yaml"))
    assert time.monotonic() - started < 10  # 9**10 items, never walked nor printed (hours)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("latin-1", r"is not UTF-8 text \(byte 0xe9 at offset 11\)"),
        ("fifo", "is not a regular file"),
        ("huge", "is larger than 16 MiB"),
    ],
)
def test_unreadable_spec_files_are_named(project: Path, kind: str, message: str) -> None:
    path = project / "job.toml"
    if kind == "latin-1":
        path.write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        with path.open("wb") as handle:
            handle.truncate(17 * 2**20)
    with pytest.raises(AscendifyError, match=f"spec file {path} {message}"):
        load_spec_file(path)


@pytest.mark.slow  # runs the CLI
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nodes = 0\n", "nodes: must be a whole number from 1 to 1024, got 0"),
        ("colour = 'red'\n", "colour: unknown field"),
        ("flavor = 'Ascend: lots'\n", "flavor: 'Ascend: lots': expected a card count"),
        (
            "grace_period = inf\n",
            "grace_period: must be a number of seconds from 0 to 3600, got inf",
        ),
        ("nodes = 300\n", "nodes: 300: engine local runs at most 254 nodes on this machine"),
        ("hyper = {x = " + "[" * 5000 + "]" * 5000 + "}\n", "spec file"),
    ],
)
def test_validate_cli_names_the_field(job: JobCli, project: Path, spec: str, message: str) -> None:
    path = project / "job.toml"
    path.write_text("boot_file = 'rank.py'\n" + spec)
    result = job("validate", str(path))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"ascendify job: error: {message}")


@pytest.mark.slow  # runs the CLI
def test_validate_cli_accepts_flags(job: JobCli, project: Path) -> None:
    result = job("validate", "--code-dir", str(project), "--boot-file", "rank.py", "--cards", "2")
    assert result.returncode == 0, result.stderr
    assert "valid: rank, engine local, 1 node(s) x 2 card(s)" in result.stdout
    missing = job("validate", "--code-dir", str(project))
    assert (missing.returncode, missing.stderr.count("\n")) == (2, 1)
    assert "boot_file: required" in missing.stderr


@pytest.mark.slow  # runs the CLI
def test_unreachable_ray_address_is_refused(job: JobCli, project: Path, jobs_dir: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--engine", "ray",
        "--address", f"127.0.0.1:{port}",
    )  # fmt: skip
    assert result.returncode == 2
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in result.stderr
    assert not (jobs_dir / "jobs.db").exists() or "ray" not in job("list").stdout


@pytest.mark.slow  # runs the CLI
def test_volcano_dry_run_renders_the_launchers_manifest(job: JobCli, project: Path) -> None:
    import yaml

    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--engine", "volcano",
        "--image", "registry.example/train:1", "--nodes", "2", "--flavor", "Ascend: 8",
        "--hyper", "lr=0.1", "--name", "demo", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = yaml.safe_load(result.stdout)
    assert manifest["kind"] == "Job"
    task = manifest["spec"]["tasks"][0]
    assert task["replicas"] == 2
    container = task["template"]["spec"]["containers"][0]
    # The job's hang timeout (its default is not the launcher's) travels with the command.
    assert container["command"] == [
        "ascendify", "run", "--nnodes", "2", "--nproc-per-node", "8", "--hang-timeout", "1800",
        "python", "rank.py", "--lr=0.1",
    ]  # fmt: skip
    real = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--engine", "pytorchjob",
        "--image", "x",
    )  # fmt: skip
    assert real.returncode == 2
    assert "--dry-run" in real.stderr


@pytest.mark.slow  # runs the CLI
def test_local_dry_run_plans_every_node(job: JobCli, project: Path) -> None:
    import json

    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2",
        "--cards", "4", "--hyper", "mode=probe", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    nodes = json.loads(result.stdout)
    assert [node["address"] for node in nodes] == ["127.0.0.1", "127.0.0.2"]
    (launcher,) = nodes[1]["steps"]
    argv = launcher["argv"]
    assert argv[1:4] == ["-m", "ascendify", "run"]
    flags = dict(zip(argv[4:-3:2], argv[5:-3:2], strict=True))
    assert flags["--nproc-per-node"] == "4"
    assert (flags["--nnodes"], flags["--node-rank"]) == ("2", "1")
    assert (flags["--master-addr"], flags["--local-addr"]) == ("127.0.0.1", "127.0.0.2")
    # Node 1's ranks start in its job dir, which holds the code under its name ("code" here).
    assert flags["--cwd"] == "<jobs dir>/<job id>/work/worker-1/user-job-dir"
    assert argv[-2:] == [
        "<jobs dir>/<job id>/work/worker-1/user-job-dir/code/rank.py",
        "--mode=probe",
    ]


def test_rerun_checks_its_new_hyperparameters_before_starting(
    project: Path, tmp_path: Path
) -> None:
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.service import rerun
    from ascendify.jobs.store import JobStore

    store = JobStore(tmp_path / "store")
    spec = resolve({"code_dir": str(project), "boot_file": "rank.py", "data_url": "/data"})
    old = store.create(spec.to_json())
    JobLayout(store.job_dir(old.id), old.id).code.mkdir(parents=True)
    with pytest.raises(SpecError, match="hyper: data_url is given twice"):
        rerun(store, old.id, hyper={"data_url": "/other"})
    assert [job.id for job in store.jobs()] == [old.id]  # nothing submitted


URL_WITH_PASSWORD = "postgres://admin:s3cr3t@db.example:5432/train"


def test_a_password_inside_a_url_is_never_stored_or_shown(project: Path, tmp_path: Path) -> None:
    from ascendify.jobs.report import describe
    from ascendify.jobs.service import rerun
    from ascendify.jobs.store import JobStore

    env = {"DATABASE_URL": URL_WITH_PASSWORD, "MIRROR": "https://user:tok3n@mirror.example/x"}
    spec = resolve(
        {"code_dir": str(project), "boot_file": "rank.py", "env": env,
         "hyper": {"db": URL_WITH_PASSWORD}},
    )  # fmt: skip
    stored = spec.to_json()
    assert stored["env"] == {
        "DATABASE_URL": "postgres://admin:***@db.example:5432/train",
        "MIRROR": "https://user:***@mirror.example/x",
    }
    assert shown_spec(stored)["hyper"] == {"db": "postgres://admin:***@db.example:5432/train"}
    store = JobStore(tmp_path / "store")
    old = store.create(stored)
    described = describe(old, [], [], JobLayout(store.job_dir(old.id), old.id))
    assert "postgres://admin:***@db.example" in described
    assert "s3cr3t" not in described
    with pytest.raises(AscendifyError, match="had MIRROR in its env"):
        rerun(store, old.id, environment={"DATABASE_URL": URL_WITH_PASSWORD})


@pytest.mark.parametrize("name", ["RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "RANK_ID"])
def test_a_variable_the_launcher_sets_per_rank_is_refused_in_env(project: Path, name: str) -> None:
    """The launcher's value replaced the job's, saying nothing."""
    with pytest.raises(SpecError) as refused:
        resolve({"code_dir": str(project), "boot_file": "rank.py", "env": {name: "3"}})
    assert f"env: {name} is set by the launcher for every rank" in str(refused.value)


def test_a_code_dir_nested_too_deep_is_refused_before_anything_is_kept(
    project: Path, tmp_path: Path
) -> None:
    """A 1,200-deep tree crashed the copy and left a queued job with a partial copy."""
    from ascendify.jobs.layout import MAX_CODE_DEPTH
    from ascendify.jobs.service import submit
    from ascendify.jobs.store import JobStore

    folders = list(itertools.accumulate(["d"] * 1_200, lambda path, name: f"{path}/{name}"))
    for folder in folders:  # pathlib and shutil recurse once a level: past Python's limit here
        (project / folder).mkdir()
    spec = resolve({"code_dir": str(project), "boot_file": "rank.py"})
    store = JobStore(tmp_path / "store")
    try:
        with pytest.raises(AscendifyError) as refused:
            submit(store, spec)
    finally:
        for folder in reversed(folders):
            (project / folder).rmdir()
    assert f"folders nested more than {MAX_CODE_DEPTH} deep" in str(refused.value)
    assert str(project / "d") in str(refused.value)
    assert store.jobs() == []
    assert not store.root.exists() or not [p for p in store.root.iterdir() if p.is_dir()]


@pytest.mark.parametrize("spelling", [{"nodes": 3, "elastic": "2:3"}, {"nodes": "2:3"}])
def test_an_elastic_job_runs_its_launchers_with_min_max(
    project: Path, spelling: dict[str, object]
) -> None:
    spec = resolve({"code_dir": str(project), "boot_file": "rank.py", **spelling})
    assert (spec.nodes, spec.elastic) == (3, 2)
    assert JobSpec.from_json(spec.to_json()) == spec
    layout = JobLayout(Path("/jobs/j1"), "j1")
    argv = agent_argv(spec, layout, node=2, addresses=("a", "b", "c"), master_port=1, python="py")
    assert argv[argv.index("--nnodes") + 1] == "2:3"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"nodes": 3, "elastic": "2:4"}, "elastic: 2:4: MAX must be the node count (3)"),
        ({"nodes": 3, "elastic": "0:3"}, "elastic: 0:3: MIN must be from 1 to the node count"),
        ({"nodes": 3, "elastic": "two"}, "elastic: must be MIN:MAX (nodes), got 'two'"),
    ],
)
def test_a_bad_elastic_range_names_the_field(
    project: Path, raw: dict[str, object], message: str
) -> None:
    with pytest.raises(SpecError) as error:
        resolve({"code_dir": str(project), "boot_file": "rank.py", **raw})
    assert message in str(error.value)


def test_describe_names_the_nodes_that_left_and_joined_and_the_stores_host() -> None:
    from ascendify.jobs.report import membership_note

    met = 1796461715.2  # 2026-12-05T09:08:35+00:00
    attempt = {"membership": {"members": [0, 1], "left": [2], "joined": [], "time": met, "host": 1}}
    assert membership_note(attempt) == (
        "nodes 0, 1 (store on node 1); node(s) 2 left at 2026-12-05T09:08:35+00:00"
    )
    assert membership_note({"attempt": 0}) == ""  # one node: no membership


def test_the_page_labels_a_restart_with_the_nodes_that_left_and_joined() -> None:
    from ascendify.jobs.report import membership_change

    membership = {"members": [0, 3], "left": [1, 2], "joined": [3], "time": 0.0, "host": 0}
    assert membership_change({"membership": membership}) == "nodes 1, 2 left, node 3 joined"
    assert membership_change({"membership": {**membership, "left": [], "joined": []}}) == ""
    assert membership_change({"attempt": 0}) == ""  # one node: no membership
