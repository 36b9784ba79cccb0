"""The one module that reads users' files and writes results: links, FIFOs, devices, sizes, containment."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ascendify._fs import (
    NotRead,
    TooLarge,
    WriteError,
    copy_file,
    inside,
    make_dir,
    make_link,
    open_log,
    output_file,
    read_source,
    refuse_output_inside_input,
    write_bytes,
)
from ascendify.errors import AscendifyError


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the folder being written, which nothing may change."""
    path = tmp_path / "victim.txt"
    path.write_text("precious\n")
    return path


def test_reads_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    assert read_source(tmp_path / "a.py").data == b"x = 1\n"


@pytest.mark.timeout(20)
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    with pytest.raises(NotRead, match="not a regular file"):
        read_source(tmp_path / "pipe.py")


@pytest.mark.timeout(20)
def test_links_are_not_followed_for_reading(tmp_path: Path) -> None:
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "real.py").write_bytes(b"x = 1\n")
    (tmp_path / "alias.py").symlink_to("real.py")
    for name in ("zero.py", "alias.py"):
        with pytest.raises(NotRead, match="symbolic link, not followed"):
            read_source(tmp_path / name)


@pytest.mark.timeout(20)
def test_a_device_node_is_refused(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "zero.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    with pytest.raises(NotRead, match="not a regular file"):
        read_source(tmp_path / "zero.py")


def test_the_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    with big.open("wb") as stream:
        stream.truncate(50 * 1024 * 1024)  # sparse: 50 MB that cost nothing to make
    with pytest.raises(TooLarge, match="file too large"):
        read_source(big)
    assert read_source(big, limit=60 * 1024 * 1024).data[:4] == b"\0\0\0\0"


def test_writing_replaces_a_link_instead_of_following_it(tmp_path: Path, victim: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "change_list.csv").symlink_to(victim)
    write_bytes(out / "change_list.csv", b"File\n", out)
    assert victim.read_text() == "precious\n"
    assert not (out / "change_list.csv").is_symlink()
    assert (out / "change_list.csv").read_bytes() == b"File\n"


def test_a_folder_that_resolves_outside_the_root_is_refused(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "reports").symlink_to(elsewhere)
    with pytest.raises(WriteError, match="resolves outside"):
        write_bytes(out / "reports" / "report.json", b"{}", out)
    with pytest.raises(WriteError, match="resolves outside"):
        inside(out, out / ".." / "escape.txt")
    with pytest.raises(WriteError, match="something else has its name"):
        make_dir(out / "reports", out)
    assert list(elsewhere.iterdir()) == []


def test_a_failed_write_leaves_neither_a_partial_file_nor_a_temporary(tmp_path: Path) -> None:
    (tmp_path / "report.csv").write_text("the previous report\n")

    def broken() -> None:
        with output_file(tmp_path / "report.csv", tmp_path) as stream:
            stream.write(b"half a rep")
            raise OSError(28, "No space left on device")

    with pytest.raises(WriteError, match=r"cannot write .*report.csv: No space left on device"):
        broken()
    assert [path.name for path in tmp_path.iterdir()] == ["report.csv"]
    assert (tmp_path / "report.csv").read_text() == "the previous report\n"


def test_a_failed_write_of_a_new_file_leaves_nothing(tmp_path: Path) -> None:
    def broken() -> None:
        with output_file(tmp_path / "model.py", tmp_path, 0o640) as stream:
            stream.write(b"import tor")
            raise OSError(28, "No space left on device")

    with pytest.raises(WriteError, match=r"cannot write .*model.py: No space left on device"):
        broken()
    assert list(tmp_path.iterdir()) == []
    with output_file(tmp_path / "model.py", tmp_path, 0o640) as stream:
        stream.write(b"import torch\n")
    assert (tmp_path / "model.py").read_bytes() == b"import torch\n"
    assert (tmp_path / "model.py").stat().st_mode & 0o777 == 0o640


def test_copy_keeps_mode_and_times_and_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    source = tmp_path / "tool"
    source.write_bytes(bytes(range(256)) * 4096)
    source.chmod(0o751)
    os.utime(source, ns=(1_000_000_000, 2_000_000_000))
    out = tmp_path / "out"
    out.mkdir()
    copy_file(source, out / "tool", out)
    copied = (out / "tool").stat()
    assert (out / "tool").read_bytes() == source.read_bytes()
    assert (stat.S_IMODE(copied.st_mode), copied.st_mtime_ns) == (0o751, 2_000_000_000)
    (tmp_path / "link").symlink_to(source)
    with pytest.raises(NotRead, match="symbolic link"):
        copy_file(tmp_path / "link", out / "link", out)
    assert not (out / "link").exists()


def test_links_are_recreated_as_links_and_logs_never_open_through_one(
    tmp_path: Path, victim: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    make_link(out / "data", "../../anywhere", out)
    assert os.readlink(out / "data") == "../../anywhere"
    (out / "log.txt").symlink_to(victim)
    with pytest.raises(WriteError, match=r"log.txt"):
        open_log(out / "log.txt", out)
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("relative", [".", "sub", "sub/deeper"])
def test_an_output_equal_to_or_inside_the_input_is_refused(tmp_path: Path, relative: str) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(AscendifyError, match="is inside the input"):
        refuse_output_inside_input(tmp_path / "src", tmp_path / "src" / relative)
    refuse_output_inside_input(tmp_path / "src", tmp_path / "src_out")  # a sibling is fine
