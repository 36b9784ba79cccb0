"""Every launcher setting, declared once in launch/options.py, reaches every engine.

For each field of LaunchOptions a value other than its default is made from its type and
bounds (so a new field is covered without touching this file), then found again: read back from
``ascendify run``'s own parser, in the command of every pod of every manifest kind that
``run --emit`` prints, and, for the settings a job passes through, in the local job's node plan
and in every manifest kind of ``job submit --dry-run``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascendify.cli import main
from ascendify.commands import run as run_command
from ascendify.errors import AscendifyError
from ascendify.jobs.manifest import manifest as job_manifest
from ascendify.jobs.manifest import node_plans_json
from ascendify.jobs.spec import FIELDS as JOB_FIELDS
from ascendify.jobs.spec import MANIFEST_ENGINES, JobSpec, resolve
from ascendify.launch import LaunchOptions
from ascendify.launch.manifests import KINDS
from ascendify.launch.options import (
    DEFAULTS,
    JOB_SETTINGS,
    Count,
    Seconds,
    check,
    from_args,
    job_default,
    settings,
    to_argv,
)
from tests.launch.k8s_schemas import problems

COMMAND = ("python", "train.py", "--lr=0.1")
# Each pod runs its own node: these name one node, so a manifest refuses them.
PER_POD = {"node_rank": "--node-rank", "local_addr": "--local-addr"}
TYPES = typing.get_type_hints(LaunchOptions)


def _without_none(annotation: Any) -> Any:
    if isinstance(annotation, types.UnionType):
        return next(arg for arg in typing.get_args(annotation) if arg is not type(None))
    return annotation


def non_default(name: str) -> dict[str, Any]:
    """Fields of LaunchOptions that set ``name`` to a value other than its default."""
    if name == "min_nnodes":
        return {"nnodes": 3, "min_nnodes": 2}
    one = next(f for f, _ in settings() if f.name == name)
    how = one.metadata["setting"]
    kind = _without_none(TYPES[name])
    if kind is bool:
        return {name: not one.default}
    if isinstance(how.bound, Seconds):
        return {name: max(one.default, how.bound.least) + 1.5}
    if isinstance(how.bound, Count):
        low = how.bound.least
        return {name: low + 1 if one.default == low else low}
    if kind is int:
        return {name: 3}
    if kind is Path:
        return {name: Path("/srv/project/x")}
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        return {name: (0, 2) if item is int else ("first", "second")}
    for text in ("4", "2-3", "node-a"):  # the first the setting's own check takes
        try:
            check(LaunchOptions(command=COMMAND, **{name: text}))
        except AscendifyError:
            continue
        return {name: text}
    raise AssertionError(f"no value found for {name}")


NAMES = [one.name for one, _ in settings()]
ALL_AT_ONCE = {
    k: v for name in NAMES if name not in ("module",) for k, v in non_default(name).items()
}


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    run_command.add_arguments(parser)
    return parser


def read_back(argv: list[str] | tuple[str, ...]) -> LaunchOptions:
    """The options ``ascendify run ARGV`` runs with, read by the command's own parser."""
    return from_args(run_parser().parse_args(list(argv)))


@pytest.mark.parametrize("name", NAMES)
def test_each_setting_round_trips_through_the_run_command_line(name: str) -> None:
    options = LaunchOptions(command=COMMAND, **non_default(name))
    assert options != dataclasses.replace(DEFAULTS, command=COMMAND)
    assert to_argv(options) != COMMAND  # written, not dropped
    assert read_back(to_argv(options)) == options


def test_every_setting_at_once_round_trips() -> None:
    options = check(LaunchOptions(command=COMMAND, **ALL_AT_ONCE))
    assert read_back(to_argv(options)) == options
    assert to_argv(options)[-len(COMMAND) :] == COMMAND


def emit(kind: str, argv: list[str] | tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> Any:
    code = main(["run", "--emit", kind, "--image", "registry.local/t:1", "--name", "t", *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return yaml.safe_load(captured.out)


def pod_commands(manifest: dict[str, Any]) -> list[list[str]]:
    spec = manifest["spec"]
    groups = spec.get("tasks") or list(
        (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values()
    )
    return [c["command"] for g in groups for c in g["template"]["spec"]["containers"]]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", [n for n in NAMES if n not in PER_POD])
def test_each_setting_reaches_every_pod_of_run_emit(
    kind: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given = {"nnodes": 2, "nproc_per_node": "2", **non_default(name)}
    options = LaunchOptions(command=COMMAND, **given)
    manifest = emit(kind, to_argv(options), capsys)
    for command in pod_commands(manifest):
        assert command[:2] == ["ascendify", "run"]
        assert read_back(command[2:]) == options


@pytest.mark.parametrize("kind", KINDS)
def test_every_setting_at_once_emits_a_valid_manifest(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given = {k: v for k, v in ALL_AT_ONCE.items() if k not in PER_POD}
    options = LaunchOptions(command=COMMAND, **{**given, "nproc_per_node": "2"})
    manifest = emit(kind, to_argv(options), capsys)
    assert problems(manifest) == []
    assert {tuple(c) for c in pod_commands(manifest)} == {("ascendify", "run", *to_argv(options))}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "flag"), PER_POD.items())
def test_a_setting_no_pod_can_honour_is_refused(
    kind: str, name: str, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = to_argv(LaunchOptions(command=COMMAND, **non_default(name)))
    assert main(["run", "--emit", kind, "--image", "i", *argv]) == 2
    err = capsys.readouterr().err
    assert f"{flag}: every pod of a manifest runs the same command" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_platforms_restarts_follow_max_restarts(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for restarts in (0, 3):
        manifest = emit(kind, ["--max-restarts", str(restarts), *COMMAND], capsys)
        assert problems(manifest) == []
        spec = manifest["spec"]
        if kind == "volcano":
            assert spec["maxRetry"] == restarts
            action = "RestartJob" if restarts else "AbortJob"
            assert spec["policies"] == [{"event": "PodEvicted", "action": action}]
        else:
            assert spec["runPolicy"]["backoffLimit"] == restarts
            replicas = (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values()
            policy = "ExitCode" if restarts else "Never"
            assert {replica["restartPolicy"] for replica in replicas} == {policy}


def test_the_job_spec_takes_its_launcher_settings_and_defaults_from_the_options(
    tmp_path: Path,
) -> None:
    (tmp_path / "train.py").write_text("")
    spec = resolve({"code_dir": str(tmp_path), "boot_file": "train.py"})
    for name in JOB_SETTINGS:
        assert name in JOB_FIELDS
        assert getattr(spec, name) == job_default(name)
        assert JobSpec.__dataclass_fields__[name].default == job_default(name)


def job_spec(tmp_path: Path, engine: str, **given: Any) -> JobSpec:
    (tmp_path / "train.py").write_text("")
    raw = {"code_dir": str(tmp_path), "boot_file": "train.py", "engine": engine, "nodes": 2}
    return resolve({**raw, "image": "registry.local/t:1", "cards": 2, **given})


@pytest.mark.parametrize("name", JOB_SETTINGS)
def test_each_job_setting_reaches_the_local_plan_and_every_manifest(
    name: str, tmp_path: Path
) -> None:
    value = non_default(name)[name]
    local = job_spec(tmp_path, "local", **{name: value})
    for plan in node_plans_json(local):
        launcher = plan["steps"][-1]["argv"]
        assert tuple(launcher[1:4]) == ("-m", "ascendify", "run")
        assert getattr(read_back(launcher[4:]), name) == value
    for engine in MANIFEST_ENGINES:
        manifest = job_manifest(job_spec(tmp_path, engine, **{name: value}))
        assert problems(manifest) == []
        for command in pod_commands(manifest):
            assert getattr(read_back(command[2:]), name) == value


@pytest.mark.parametrize("engine", MANIFEST_ENGINES)
def test_every_manifest_kind_carries_the_env_and_keeps_secrets_out(
    engine: str, tmp_path: Path
) -> None:
    spec = job_spec(tmp_path, engine, env={"FOO": "1", "HF_TOKEN": "hf_abc123"})
    manifest = job_manifest(spec)
    assert problems(manifest) == []
    assert "hf_abc123" not in json.dumps(manifest)
    for group in pod_groups(manifest):
        [container] = group["template"]["spec"]["containers"]
        env = {e["name"]: e for e in container["env"]}
        assert env["FOO"] == {"name": "FOO", "value": "1"}
        assert env["HF_TOKEN"]["valueFrom"] == {
            "secretKeyRef": {"name": "train-env", "key": "HF_TOKEN"}
        }
        assert env["MA_NUM_HOSTS"]["value"] == "2"
        assert env["MA_CURRENT_INSTANCE_NAME"]["valueFrom"]["fieldRef"] == {
            "fieldPath": "metadata.name"
        }


def pod_groups(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    spec = manifest["spec"]
    return spec.get("tasks") or list(
        (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values()
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("log_url", "/tmp/logs"),
        ("metrics", {"acc": r"acc=(\S+)"}),
        ("install_requirements", True),
        ("address", "ray://head:10001"),
    ],
)
@pytest.mark.parametrize("command", ["validate", "submit"])
def test_a_job_field_no_manifest_engine_honours_is_refused(
    field: str,
    value: object,
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "train.py").write_text("")
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(
        yaml.safe_dump(
            {"boot_file": "train.py", "engine": "pytorchjob", "image": "i", field: value}
        )
    )
    extra = ["--dry-run"] if command == "submit" else []
    assert main(["job", command, str(spec_file), *extra]) == 2
    err = capsys.readouterr().err
    assert f"{field}: engine pytorchjob cannot honour it" in err
    assert len(err.strip().splitlines()) == 1
