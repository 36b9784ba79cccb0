"""plan_channels is pure: argv and environment in, channels and the rewritten argv out."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.storage import Channel, ChannelError, S3Settings, for_node, plan_channels

from .conftest import ACCESS_KEY_ID, SECRET_ACCESS_KEY


def staging(workdir: Path, kind: str, name: str) -> str:
    return os.path.join(str(workdir), kind, f"{name}_0")


def test_remote_values_are_rewritten_in_both_argument_forms(tmp_path: Path) -> None:
    argv = [
        "python",
        "train.py",
        "--data_url=s3://bkt/data/",
        "--train_url",
        "obs://bkt/out",
        "-e3",
    ]
    plan = plan_channels(argv, {}, tmp_path)
    data_dir = staging(tmp_path, "inputs", "data_url")
    out_dir = staging(tmp_path, "outputs", "train_url")
    assert plan.argv == (
        "python",
        "train.py",
        f"--data_url={data_dir}/",  # the URL's trailing slash is kept
        "--train_url",
        out_dir,
        "-e3",
    )
    assert plan.channels == (
        Channel("data_url", "input", "s3://bkt/data/", data_dir, remote=True),
        Channel("train_url", "output", "obs://bkt/out", out_dir, remote=True),
    )
    assert [c.name for c in plan.remote_inputs] == ["data_url"]
    assert [c.name for c in plan.remote_outputs] == ["train_url"]


def test_local_paths_stay_and_file_urls_become_paths(tmp_path: Path) -> None:
    argv = ["python", "t.py", "--data_url", "relative/data", "--train_url=file:///abs/out"]
    plan = plan_channels(argv, {}, tmp_path)
    assert plan.argv == ("python", "t.py", "--data_url", "relative/data", "--train_url=/abs/out")
    assert plan.channels == (
        Channel("data_url", "input", "relative/data", "relative/data", remote=False),
        Channel("train_url", "output", "/abs/out", "/abs/out", remote=False),
    )
    assert plan.remote_inputs == plan.remote_outputs == ()


def test_declared_channels_and_undeclared_arguments(tmp_path: Path) -> None:
    argv = [
        "t.py",
        "--extra_in_url=s3://bkt/x",
        "--extra_out_url",
        "s3://bkt/y",
        "--other_url=s3://z/",
    ]
    plan = plan_channels(argv, {}, tmp_path, inputs=("extra_in",), outputs=("extra_out_url",))
    assert [(c.name, c.direction) for c in plan.channels] == [
        ("extra_in_url", "input"),
        ("extra_out_url", "output"),
    ]
    assert plan.argv[1] == f"--extra_in_url={staging(tmp_path, 'inputs', 'extra_in_url')}"
    assert plan.argv[3] == staging(tmp_path, "outputs", "extra_out_url")
    assert plan.argv[4] == "--other_url=s3://z/"  # not declared: left alone


def test_same_value_twice_is_one_channel(tmp_path: Path) -> None:
    plan = plan_channels(["--data_url=s3://b1x/d", "--data_url", "s3://b1x/d"], {}, tmp_path)
    assert len(plan.channels) == 1
    assert plan.argv[2] == plan.channels[0].local_dir


def test_platform_channels_v2_inputs_and_v1_outputs(tmp_path: Path) -> None:
    env = {
        "MA_INPUTS": json.dumps(
            {
                "inputs": [
                    {
                        "name": "data_url",
                        "local_dir": f"{tmp_path}/modelarts/inputs/data_url_0",
                        "remote": {"obs": {"obs_url": "s3://bkt/dataset/"}},
                    },
                    {
                        "name": "vocab",
                        "access_method": "env",
                        "remote": {"obs": {"obs_url": "obs://bkt/vocab/"}},
                    },
                ]
            }
        ),
        "MA_OUTPUTS": json.dumps(
            {
                "outputs": [
                    {
                        "parameter": {"label": "train_url", "value": "job/outputs/train_url_0"},
                        "data_source": {"obs": {"obs_url": "s3://bkt/results/"}},
                    }
                ]
            }
        ),
    }
    plan = plan_channels(["python", "train.py"], env, tmp_path)
    assert plan.channels == (
        Channel(
            "data_url",
            "input",
            "s3://bkt/dataset/",
            f"{tmp_path}/modelarts/inputs/data_url_0",
            remote=True,
        ),
        Channel("vocab", "input", "obs://bkt/vocab/", staging(tmp_path, "inputs", "vocab"), True),
        Channel(
            "train_url", "output", "s3://bkt/results/", f"{tmp_path}/job/outputs/train_url_0", True
        ),
    )
    assert plan.env == {"vocab": staging(tmp_path, "inputs", "vocab")}
    assert plan.argv == ("python", "train.py")


@pytest.mark.parametrize("local_dir", ["/", "/home/ma-user/data", "../elsewhere"])
def test_platform_local_dirs_outside_the_job_are_refused(tmp_path: Path, local_dir: str) -> None:
    entry = {
        "name": "data_url",
        "local_dir": local_dir,
        "remote": {"obs": {"obs_url": "s3://b/d/"}},
    }
    env = {"MA_INPUTS": json.dumps({"inputs": [entry]})}
    with pytest.raises(ChannelError, match=r"MA_INPUTS channel data_url: local_dir .* is outside"):
        plan_channels(["train.py"], env, tmp_path)


def test_other_nodes_upload_below_their_own_prefix(tmp_path: Path) -> None:
    argv = ["t.py", "--data_url=s3://bkt/in/", "--train_url=s3://bkt/out"]
    plan = plan_channels(argv, {}, tmp_path)
    assert for_node(plan, 0) == plan  # node 0: where a one-node job puts its outputs
    data, train = for_node(plan, 3).channels
    assert (data.url, train.url) == ("s3://bkt/in/", "s3://bkt/out/node-3/")
    assert train.local_dir == plan.channels[1].local_dir


def test_command_line_wins_over_platform_channels(tmp_path: Path) -> None:
    env = {
        "MA_INPUTS": json.dumps(
            {"inputs": [{"name": "data_url", "remote": {"obs": {"obs_url": "s3://bkt/old/"}}}]}
        ),
        "MA_OUTPUTS": json.dumps(
            {"outputs": [{"name": "train_url", "remote": {"obs": {"obs_url": "s3://bkt/out/"}}}]}
        ),
    }
    argv = ["t.py", "--data_url=s3://bkt/new/", "--train_url=/local/out"]
    plan = plan_channels(argv, env, tmp_path)
    data, train = plan.channels
    assert data.url == "s3://bkt/new/"
    # A local command-line value is where the platform's remote channel is staged, as on ModelArts.
    assert train == Channel("train_url", "output", "s3://bkt/out/", "/local/out", remote=True)
    assert plan.argv == ("t.py", f"--data_url={data.local_dir}/", "--train_url=/local/out")


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--data_url=gs://bkt/x"], {}, "unsupported scheme 'gs'"),
        (["--train_url", "s3://"], {}, "names no bucket"),
        (["--data_url=s3://a1b/x", "--data_url=s3://a1b/y"], {}, "more than once"),
        ([], {"MA_INPUTS": "{not json"}, "MA_INPUTS is not valid JSON"),
        ([], {"MA_OUTPUTS": '{"outputs": {}}'}, "list 'outputs'"),
        ([], {"MA_INPUTS": '{"inputs": [{"name": "data_url"}]}'}, "no obs_url"),
    ],
)
def test_malformed_channels_are_rejected(
    tmp_path: Path, argv: list[str], env: dict[str, str], message: str
) -> None:
    with pytest.raises(ChannelError, match=message) as caught:
        plan_channels(argv, env, tmp_path)
    assert isinstance(caught.value, AscendifyError)


def test_a_name_cannot_be_input_and_output(tmp_path: Path) -> None:
    with pytest.raises(ChannelError, match="both as an input and as an output"):
        plan_channels([], {}, tmp_path, inputs=("ckpt",), outputs=("ckpt_url",))


@pytest.mark.parametrize(
    ("env", "endpoint", "verify"),
    [
        ({"S3_ENDPOINT": "obs.example.com"}, "https://obs.example.com", True),
        ({"S3_ENDPOINT": "obs.example.com", "S3_USE_HTTPS": "0"}, "http://obs.example.com", True),
        ({"S3_ENDPOINT": "http://h:9000", "S3_VERIFY_SSL": "false"}, "http://h:9000", False),
        ({"AWS_ENDPOINT_URL": "http://127.0.0.1:5"}, "http://127.0.0.1:5", True),
        (
            {"S3_ENDPOINT": "https://obs.example.com", "AWS_ENDPOINT_URL": "http://o"},
            "https://obs.example.com",
            True,
        ),
        ({}, None, True),
    ],
)
def test_endpoint_from_environment(
    tmp_path: Path, env: dict[str, str], endpoint: str | None, verify: bool
) -> None:
    settings = plan_channels([], env, tmp_path).settings
    assert (settings.endpoint_url, settings.verify_ssl) == (endpoint, verify)


@pytest.mark.parametrize(
    ("env", "retries"),
    [
        ({}, (3, "standard")),
        ({"AWS_MAX_ATTEMPTS": "1", "AWS_RETRY_MODE": "adaptive"}, (1, "adaptive")),
        ({"AWS_MAX_ATTEMPTS": "", "AWS_RETRY_MODE": ""}, (3, "standard")),
    ],
)
def test_retries_are_set_the_way_botocore_reads_them(
    env: dict[str, str], retries: tuple[int, str]
) -> None:
    settings = S3Settings.from_env(env)
    assert (settings.max_attempts, settings.retry_mode) == retries
    client_retries = settings.filesystem().config_kwargs["retries"]  # what botocore is given
    # total_max_attempts, as AWS_MAX_ATTEMPTS: botocore's max_attempts counts only the retries
    assert (client_retries["total_max_attempts"], client_retries["mode"]) == retries


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"AWS_MAX_ATTEMPTS": "0"},
            "AWS_MAX_ATTEMPTS must be a whole number of at least 1, not '0'",
        ),
        ({"AWS_MAX_ATTEMPTS": "three"}, "not 'three'"),
        ({"AWS_RETRY_MODE": "eager"}, "AWS_RETRY_MODE must be one of legacy, standard, adaptive"),
    ],
)
def test_a_retry_setting_botocore_refuses_is_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(AscendifyError, match=re.escape(message)):
        S3Settings.from_env(env)


def test_credentials_never_print(tmp_path: Path) -> None:
    env = {"AWS_ACCESS_KEY_ID": ACCESS_KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY}
    plan = plan_channels(["--data_url=s3://bkt/d"], env, tmp_path)
    shown = [
        repr(plan),
        str(plan),
        json.dumps(dataclasses.asdict(plan), default=str),
        f"{plan.settings}",
    ]
    for text in shown:
        assert ACCESS_KEY_ID not in text
        assert SECRET_ACCESS_KEY not in text
    assert plan.settings.secrets() == (ACCESS_KEY_ID, SECRET_ACCESS_KEY)
    assert plan.settings == S3Settings.from_env(env)


def test_platform_channel_with_a_local_url_stays_local(tmp_path: Path) -> None:
    env = {
        "MA_INPUTS": json.dumps(
            {"inputs": [{"name": "data_url", "remote": {"obs": {"obs_url": "file:///srv/data"}}}]}
        )
    }
    plan = plan_channels([], env, tmp_path)
    assert plan.channels == (Channel("data_url", "input", "/srv/data", "/srv/data", False),)
