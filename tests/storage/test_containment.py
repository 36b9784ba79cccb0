"""Hostile trees on both sides of a copy: keys that leave the staging dir, links out and loops."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ascendify.storage import JobChannels, S3Settings, UnsafeKeyError, copy_tree, plan_channels
from tests.conftest import RunCli
from tests.storage.conftest import put_objects, read_objects


def tree_of(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize(
    "escaping",
    [
        "ds/../../boot.py",  # up and out, into the project
        "ds/../../../../boot.py",  # further up
    ],
)
def test_a_key_climbing_out_of_the_staging_dir_is_refused_before_any_write(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path, escaping: str
) -> None:
    project = tmp_path / "project"
    staging = project / "inputs" / "data_url_0"
    project.mkdir()
    (project / "boot.py").write_text("print('the real boot script')\n")
    put_objects(s3, bucket, {"in/a.txt": b"fine", f"in/{escaping}": b"print('owned')\n"})
    with pytest.raises(UnsafeKeyError) as refused:
        copy_tree(f"s3://{bucket}/in/", str(staging), settings=S3Settings.from_env(s3_env))
    assert f"in/{escaping}" in str(refused.value)
    assert "outside the staging directory" in str(refused.value)
    assert (project / "boot.py").read_text() == "print('the real boot script')\n"
    assert tree_of(project) == ["boot.py"]  # not even the staging dir, nor a.txt


def test_a_key_naming_an_absolute_path_is_refused(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    put_objects(s3, bucket, {f"data/{victim}": b"overwritten"})  # data//tmp/.../victim.txt
    with pytest.raises(UnsafeKeyError, match=f"data/{victim}"):
        copy_tree(f"s3://{bucket}/data", str(tmp_path / "s"), settings=S3Settings.from_env(s3_env))
    assert not victim.exists()


def test_a_key_through_a_link_out_of_the_staging_dir_is_refused(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    staging, outside = tmp_path / "staging", tmp_path / "outside"
    staging.mkdir()
    outside.mkdir()
    (staging / "ds").symlink_to(outside)  # left there by an earlier job
    put_objects(s3, bucket, {"in/ds/x.txt": b"through the link"})
    with pytest.raises(UnsafeKeyError, match=r"in/ds/x\.txt"):
        copy_tree(f"s3://{bucket}/in", str(staging), settings=S3Settings.from_env(s3_env))
    assert list(outside.iterdir()) == []


def test_odd_keys_that_stay_inside_are_staged(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"in/a//b.txt": b"b", "in/./c.txt": b"c", "in/d/../e.txt": b"e"})
    copy_tree(f"s3://{bucket}/in", str(tmp_path / "s"), settings=S3Settings.from_env(s3_env))
    assert tree_of(tmp_path / "s") == ["a", "a/b.txt", "c.txt", "e.txt"]


def hostile_output_tree(root: Path, outside: Path) -> None:
    """An output folder with every kind of link a job (or an attacker) can leave in it."""
    (outside / "private").mkdir(parents=True)
    (outside / "private" / "id_rsa").write_text("PRIVATE KEY")
    (outside / "secret.txt").write_text("SECRET")
    (root / "ckpt").mkdir(parents=True)
    (root / "ckpt" / "model.pt").write_bytes(b"weights")
    (root / "metrics.json").write_text("{}")
    (root / "private").symlink_to(outside / "private")  # a directory out of the folder
    (root / "secret.txt").symlink_to(outside / "secret.txt")  # a file out of the folder
    (root / "ckpt" / "loop").symlink_to("..")  # back up: a directory loop
    (root / "a").symlink_to("b")  # a -> b -> a: a link loop
    (root / "b").symlink_to("a")
    (root / "dangling").symlink_to(root / "gone")
    (root / "latest.pt").symlink_to("ckpt/model.pt")  # inside: uploaded under its own name
    os.mkfifo(root / "pipe")  # reading it would block the upload forever


LEFT_OUT = ("private", "secret.txt", "ckpt/loop", "a", "b", "dangling", "pipe")


def test_upload_never_leaves_the_folder_and_survives_link_loops(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    outputs = tmp_path / "outputs"
    hostile_output_tree(outputs, tmp_path / "home")
    result = copy_tree(
        f"file://{outputs}", f"s3://{bucket}/run/", settings=S3Settings.from_env(s3_env)
    )
    uploaded = read_objects(s3, bucket, "run/")
    assert sorted(uploaded) == ["ckpt/model.pt", "latest.pt", "metrics.json"]
    assert uploaded["latest.pt"] == b"weights"
    assert b"PRIVATE KEY" not in uploaded.values()
    assert b"SECRET" not in uploaded.values()
    assert sorted(entry.split(":")[0] for entry in result.left_out) == sorted(LEFT_OUT)
    assert any("outside" in e for e in result.left_out if e.startswith("private:"))
    assert any("loop" in e for e in result.left_out if e.startswith("ckpt/loop:"))


def test_job_channels_warn_about_each_left_out_entry_once(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"in/x": b"x"})
    plan = plan_channels(
        ["train.py", f"--data_url=s3://{bucket}/in", f"--train_url=s3://{bucket}/out"],
        s3_env,
        tmp_path,
    )
    logs: list[str] = []
    with JobChannels(plan, upload_interval=0, log=logs.append) as channels:
        hostile_output_tree(tmp_path / "outputs" / "train_url_0", tmp_path / "home")
        channels.upload_outputs()  # a periodic round; the final one at exit finds the same
    warnings = [line for line in logs if "not uploaded" in line]
    assert sorted(w.split("not uploaded: ")[1].split(":")[0] for w in warnings) == sorted(LEFT_OUT)
    assert any("train_url: uploaded 3 files" in line for line in logs)


@pytest.mark.slow
def test_run_refuses_an_escaping_key_with_one_line_and_starts_no_rank(
    run_cli: RunCli, tmp_path: Path, s3: Any, bucket: str, s3_env: dict[str, str]
) -> None:
    boot = tmp_path / "train.py"
    boot.write_text("open('started', 'w').write('yes')\n")
    put_objects(s3, bucket, {"in/ds/../../train.py": b"open('owned', 'w').write('yes')\n"})
    result = run_cli(
        ["run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"), "python",
         str(boot), f"--data_url=s3://{bucket}/in/"],
        cwd=tmp_path,
        env=s3_env,
    )  # fmt: skip
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    assert "in/ds/../../train.py" in errors[0]
    assert "Traceback" not in result.stderr
    assert boot.read_text() == "open('started', 'w').write('yes')\n"
    assert not (tmp_path / "started").exists()
    assert not (tmp_path / "owned").exists()
