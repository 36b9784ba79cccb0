"""copy_tree against a real S3-protocol server: both directions, skip-unchanged, errors."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ascendify.storage import (
    AccessDeniedError,
    BucketNotFoundError,
    ChannelError,
    ContentHashes,
    EndpointUnreachableError,
    NoSpaceError,
    NoSuchKeyError,
    S3Settings,
    StorageError,
    TransferError,
    _copy,
    copy_tree,
)

from .conftest import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Restricted, put_objects, read_objects

TREE = {"a.txt": b"alpha", "sub/b.bin": bytes(range(256)) * 40, "sub/deeper/c": b""}


def local_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)


@pytest.mark.parametrize("scheme", ["s3", "obs"])
def test_download_tree(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path, scheme: str
) -> None:
    put_objects(s3, bucket, {f"data/{k}": v for k, v in TREE.items()})
    put_objects(s3, bucket, {"data-other/x": b"not under data/"})
    result = copy_tree(
        f"{scheme}://{bucket}/data/", str(tmp_path), settings=S3Settings.from_env(s3_env)
    )
    assert local_tree(tmp_path) == TREE
    assert sorted(result.copied) == sorted(TREE)
    assert result.bytes_copied == sum(map(len, TREE.values()))


def test_download_single_object_lands_under_its_name(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"models/base.pt": b"weights"})
    copy_tree(f"s3://{bucket}/models/base.pt", str(tmp_path), settings=S3Settings.from_env(s3_env))
    assert local_tree(tmp_path) == {"base.pt": b"weights"}


def test_download_resumes_and_fetches_only_what_changed(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    settings = S3Settings.from_env(s3_env)
    files = {f"data/f{i:02d}": f"content {i}".encode() for i in range(12)}
    put_objects(s3, bucket, files)
    url = f"s3://{bucket}/data"
    assert len(copy_tree(url, str(tmp_path), settings=settings).copied) == 12

    (tmp_path / "f03").unlink()  # lost locally
    partials = _copy.partial_dir(tmp_path)
    partials.mkdir()
    (partials / "4").write_bytes(b"half")  # left by an earlier run that was killed outright
    put_objects(s3, bucket, {"data/f07": b"content 7 v2"})  # changed remotely
    os.utime(tmp_path / "f05", (0, 0))  # touched, same content: hashed, kept and stamped again
    (tmp_path / "f06").write_bytes(b"CONTENT 6")  # same size, other content

    again = copy_tree(url, str(tmp_path), settings=settings)
    assert sorted(again.copied) == ["f03", "f06", "f07"]
    assert len(again.skipped) == 9
    assert (tmp_path / "f06").read_bytes() == b"content 6"
    assert (tmp_path / "f05").stat().st_mtime > 0
    assert (tmp_path / "f07").read_bytes() == b"content 7 v2"
    assert not partials.exists()
    assert copy_tree(url, str(tmp_path), settings=settings).copied == ()


def test_upload_skips_identical_content_and_sends_changes(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    settings = S3Settings.from_env(s3_env)
    write_tree(tmp_path, TREE)
    url = f"obs://{bucket}/run1"
    first = copy_tree(str(tmp_path), url, settings=settings, progress=True)
    assert sorted(first.copied) == sorted(TREE)
    assert read_objects(s3, bucket, "run1/") == TREE

    hashes = ContentHashes()
    assert copy_tree(str(tmp_path), url, settings=settings, hashes=hashes).copied == ()
    (tmp_path / "a.txt").write_bytes(b"ALPHA")  # same size, new content
    (tmp_path / "new.txt").write_bytes(b"new")
    changed = copy_tree(str(tmp_path), url, settings=settings, hashes=hashes)
    assert sorted(changed.copied) == ["a.txt", "new.txt"]
    assert read_objects(s3, bucket, "run1/")["a.txt"] == b"ALPHA"


def test_multipart_objects_are_recognised_as_unchanged(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # S3's smallest part is 5 MiB; an 11 MiB file then goes up in three parts.
    monkeypatch.setattr(_copy, "PART_SIZE", 5 * 2**20)
    (tmp_path / "ckpt.pt").write_bytes(os.urandom(11 * 2**20))
    settings = S3Settings.from_env(s3_env)
    url = f"s3://{bucket}/big"
    assert copy_tree(str(tmp_path), url, settings=settings).copied == ("ckpt.pt",)
    assert s3.head_object(Bucket=bucket, Key="big/ckpt.pt")["ETag"].strip('"').endswith("-3")
    assert copy_tree(str(tmp_path), url, settings=settings).copied == ()


def test_download_refuses_to_start_without_disk_space(tmp_path: Path) -> None:
    huge = _copy._RemoteFile(path="bkt/huge", size=2**62, etag="", mtime_ns=0)
    with pytest.raises(NoSpaceError, match="needs"):
        _copy._check_space(tmp_path / "not-yet-created", {"huge": huge})
    _copy._check_space(tmp_path, {"small": dataclasses.replace(huge, size=1)})


def test_missing_bucket(s3_env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(BucketNotFoundError, match="bucket 'no-such-bucket-x1'"):
        copy_tree("s3://no-such-bucket-x1/d", str(tmp_path), settings=S3Settings.from_env(s3_env))


def test_missing_key(bucket: str, s3_env: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(NoSuchKeyError, match=f"s3://{bucket}/nothing/here/"):
        copy_tree(
            f"s3://{bucket}/nothing/here/", str(tmp_path), settings=S3Settings.from_env(s3_env)
        )


# Nothing listens on the discard port, so each connection is refused at once; one attempt per
# request (AWS_MAX_ATTEMPTS, botocore's own variable) reports it without the default retries' 2-7 s.
def test_unreachable_endpoint(s3_env: dict[str, str], tmp_path: Path) -> None:
    env = {**s3_env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    with pytest.raises(EndpointUnreachableError, match=re.escape("http://127.0.0.1:9")) as caught:
        copy_tree("s3://some-bucket/d", str(tmp_path), settings=S3Settings.from_env(env))
    assert SECRET_ACCESS_KEY not in str(caught.value)
    assert ACCESS_KEY_ID not in str(caught.value)


def test_access_denied(restricted: Restricted, tmp_path: Path) -> None:
    settings = S3Settings.from_env(restricted.env)
    url = f"s3://{restricted.forbidden}/x"
    with pytest.raises(AccessDeniedError, match=f"access denied to {url}") as caught:
        copy_tree(url, str(tmp_path), settings=settings)
    for secret in settings.secrets():
        assert secret not in str(caught.value)


def test_wrong_credentials_are_access_denied(restricted: Restricted, tmp_path: Path) -> None:
    env = {**restricted.env, "AWS_SECRET_ACCESS_KEY": "wrong-secret-value-123"}
    url = f"s3://{restricted.allowed}"
    with pytest.raises(AccessDeniedError, match=f"access denied to {url}") as caught:
        copy_tree(url, str(tmp_path), settings=S3Settings.from_env(env))
    assert "wrong-secret-value-123" not in str(caught.value)
    assert restricted.env["AWS_ACCESS_KEY_ID"] not in str(caught.value)


def test_allowed_bucket_works_with_restricted_credentials(
    restricted: Restricted, tmp_path: Path
) -> None:
    url = f"s3://{restricted.allowed}"
    result = copy_tree(url, str(tmp_path), settings=S3Settings.from_env(restricted.env))
    assert result.copied == ("file.txt",)


def test_local_to_local_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ChannelError, match="between object storage and a local directory"):
        copy_tree(str(tmp_path), f"file://{tmp_path}/x")


def test_errors_are_storage_errors() -> None:
    for kind in (AccessDeniedError, BucketNotFoundError, EndpointUnreachableError, NoSuchKeyError):
        assert issubclass(kind, StorageError)


@pytest.mark.slow  # runs long: 100 objects through the copy's 64 workers
def test_a_failing_file_stops_the_copy_and_leaves_no_partial_files(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    # More files than the copy's 64 workers, and the failing one late enough that when it fails
    # some files are done, most are in flight and the rest still wait for a worker.
    put_objects(s3, bucket, {f"data/f{i:03d}": b"x" * 100 for i in range(100)})
    (tmp_path / "f080").mkdir()  # a directory where a file must go: that file cannot land
    with pytest.raises(TransferError, match="IsADirectoryError"):
        copy_tree(f"s3://{bucket}/data", str(tmp_path), settings=S3Settings.from_env(s3_env))
    assert not _copy.partial_dir(tmp_path).exists()
    assert not list(tmp_path.rglob("*.ascendify-partial*"))


def test_no_progress_display_when_stderr_is_not_a_terminal(
    s3: Any,
    bucket: str,
    s3_env: dict[str, str],
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
) -> None:
    put_objects(s3, bucket, {"data/x": b"x" * 1000})
    copy_tree(f"s3://{bucket}/data", str(tmp_path), settings=S3Settings.from_env(s3_env))
    assert capfd.readouterr().err == ""
