"""Fuzz: generated hostile trees fed to ``migrate`` and ``analyze``.

Each tree mixes links (inside, out, dangling, loops, to devices and to ``/``), odd names (shell
metacharacters, bytes that are not UTF-8, newlines, report names, 255-byte names), encodings,
sources too deep or too large, deep folders and FIFOs. For every tree and both commands: the input
is unchanged, nothing is written outside the output folder, the exit code is 0 or 2 and there is no
traceback. A seeded generator makes every failure reproducible (the tree's seed is in the message).
"""

from __future__ import annotations

import hashlib
import os
import random
import stat
from pathlib import Path

import pytest

from ascendify.cli import main
from tests.conftest import RunCli

SEED = 20261201
# The fast loop migrates FAST_TREES trees in process (under a tenth of a second each). From SEED
# they already hold every entry kind, link target, source and name above (20 trees do), and use
# each of _MIGRATE_OPTIONS six times. The full suite goes on to TREES under ``slow``, for the
# rarer combinations of those.
FAST_TREES = 24
TREES = 200
CLI_TREES = 5
# analyze exits 1 when it finds something that blocks the NPU: an answer, not a failure.
_ALLOWED = {"migrate": (0, 2), "analyze": (0, 1, 2)}
# Each tree is migrated with one of these (in turn): the modes write files of their own.
_MIGRATE_OPTIONS = ([], ["--target", "portable"], ["-m", "-s"], ["--diff"])

_NAMES = [
    "train.py",
    "a;touch X;#.py",
    "$(touch Y).py",
    "`touch Z`.py",
    "-rf.py",
    "=HYPERLINK(1).py",
    "with space.py",
    "new\nline.py",
    "tab\there.py",
    "ünïcödé.py",
    "日本語.py",
    os.fsdecode(b"bad\xff\xfename.py"),
    os.fsdecode(b"\x80.py"),
    "x" * 252 + ".py",
    "change_list.csv",
    "msFmkTranspltlog.txt",
    "msFmkTranspltlog.txt.3",
    "unsupported_op.xlsx",
    "ascendify_analysis",
    "ascendify_incomplete.txt",
    "report.json",
    "kernel.cu",
    "ops.cpp",
    "data.bin",
    ".hidden.py",
    "__init__.py",
]

_SOURCES: list[bytes] = [
    b"import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n",
    b"import torch\ny = " + b"+".join([b"x.cuda()"] * 500) + b"\n",
    b"import torch\ny = " + b"+".join([b"x.cuda()"] * 5000) + b"\n",  # too deep for Python itself
    b"def broken(:\n    pass\n",
    b"print 'python 2'\n",
    b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9t\xe9'\nt = torch.ones(1).cuda()\n",
    b"\xef\xbb\xbfimport torch\nx = torch.ones(1).cuda()\n",
    b"# coding: no-such-codec\nimport torch\n",
    b"import torch\nx = '\xff\xfe not utf-8'.cuda()\n",
    "import torch\nx = torch.ones(1).cuda()\n".encode("utf-16"),
    b"",
    b"\0\0\0 nul bytes torch.cuda\0",
    b"import torch\r\nx = torch.ones(1).cuda()\rz = 1\n",
    b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n",
    b"".join(b"    " * depth + b"if torch.cuda:\n" for depth in range(120)) + b"pass\n",
    b'PYBIND11_MODULE(m, m) { m.def("op", &op); }\n__global__ void k() {}\n',
]


class _TreeMaker:
    """One random hostile tree under ``root``; ``outside`` holds what links may point at."""

    def __init__(self, rng: random.Random, root: Path, outside: Path) -> None:
        self.rng = rng
        self.root = root
        self.outside = outside
        self.made: list[Path] = []

    def build(self) -> None:
        self.root.mkdir()
        folders = [self.root]
        for _ in range(self.rng.randint(1, 25)):
            parent = self.rng.choice(folders)
            choice = self.rng.random()
            if choice < 0.15:
                folders.append(self._deep_folder(parent))
            else:
                self._entry(parent, folders)

    def _deep_folder(self, parent: Path) -> Path:
        path = parent
        for level in range(self.rng.randint(2, 40)):
            path = path / f"d{level}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _name(self, parent: Path) -> Path:
        name = self.rng.choice(_NAMES)
        if self.rng.random() < 0.3:
            name = f"{self.rng.randint(0, 99)}{name}"[:255]
        path = parent / name
        return path if not os.path.lexists(path) else parent / f"{self.rng.randint(0, 10**9)}.py"

    def _entry(self, parent: Path, folders: list[Path]) -> None:
        path = self._name(parent)
        kind = self.rng.choices(
            ["source", "folder", "link", "fifo", "big", "binary"],
            weights=[10, 2, 5, 1, 0.3, 1],
        )[0]
        if kind == "source":
            path.write_bytes(self.rng.choice(_SOURCES))
            if self.rng.random() < 0.1:
                path.chmod(self.rng.choice([0o000, 0o444, 0o755]))
        elif kind == "folder":
            path.mkdir()
            folders.append(path)
        elif kind == "link":
            os.symlink(self._link_target(path), path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "big":
            with path.open("wb") as stream:
                stream.write(_SOURCES[0])
                stream.truncate(11 * 1024 * 1024)  # over the size limit, sparse
        else:
            path.write_bytes(self.rng.randbytes(self.rng.randint(0, 4096)))

    def _link_target(self, path: Path) -> str:
        return self.rng.choice(
            [
                "train.py",
                path.name,  # itself: a loop
                "../" * self.rng.randint(1, 6),
                str(self.outside / "victim.txt"),
                str(self.outside),
                "/dev/zero",
                "/",
                "does/not/exist",
                os.fsdecode(b"\xff/loop"),
            ]
        )


def _snapshot(root: Path, skip: set[Path]) -> dict[str, tuple[object, ...]]:
    """Every entry under ``root`` (never following links), except the folders in ``skip``."""
    entries: dict[str, tuple[object, ...]] = {}
    for directory, dirs, files in os.walk(root):
        here = Path(directory)
        dirs[:] = [name for name in dirs if here / name not in skip]
        for name in dirs + files:
            path = here / name
            info = path.lstat()
            key = os.fsencode(path.relative_to(root)).hex()
            if stat.S_ISLNK(info.st_mode):
                entries[key] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode) and info.st_size < 1024 * 1024:
                mode = stat.S_IMODE(info.st_mode)
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entries[key] = ("file", mode, digest)
            else:
                entries[key] = ("other", info.st_mode, info.st_size, info.st_mtime_ns)
    return entries


def _make_world(tmp_path: Path, seed: int) -> tuple[Path, Path]:
    """The tree (``src``) and a folder beside it that must never change; returns (src, world)."""
    world = tmp_path / f"world{seed}"
    outside = world / "outside"
    outside.mkdir(parents=True)
    (outside / "victim.txt").write_text("precious\n")
    source = world / "src"
    _TreeMaker(random.Random(seed), source, outside).build()
    return source, world


def _check(world: Path, outputs: set[Path], before: dict[str, tuple[object, ...]]) -> None:
    assert _snapshot(world, outputs) == before, "the input or something outside the output changed"
    assert not any((Path.cwd() / name).exists() for name in ("X", "Y", "Z"))


def _migrate_and_analyse_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seeds: range
) -> None:
    for seed in seeds:
        source, world = _make_world(tmp_path, seed)
        migrated, analysed = world / "migrated", world / "analysed"
        before = _snapshot(world, {migrated, analysed})
        options = _MIGRATE_OPTIONS[seed % len(_MIGRATE_OPTIONS)]
        for command, out, extra in (
            ("migrate", migrated, options),
            ("analyze", analysed, []),
        ):
            code = main([command, "-i", str(source), "-o", str(out), "-j", "1", *extra])
            stderr = capsys.readouterr().err
            assert code in _ALLOWED[command], (seed, command, stderr)
            assert "Traceback" not in stderr, (seed, command, stderr)
            assert "internal error" not in stderr, (seed, command, stderr)
        _check(world, {migrated, analysed}, before)


@pytest.mark.timeout(300)
def test_hostile_trees_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _migrate_and_analyse_in_process(tmp_path, capsys, range(SEED, SEED + FAST_TREES))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_more_hostile_trees_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _migrate_and_analyse_in_process(tmp_path, capsys, range(SEED + FAST_TREES, SEED + TREES))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_hostile_trees_through_the_command_line(tmp_path: Path, run_cli: RunCli) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for seed in range(SEED + TREES, SEED + TREES + CLI_TREES):
        source, world = _make_world(tmp_path, seed)
        migrated, analysed = world / "migrated", world / "analysed"
        before = _snapshot(world, {migrated, analysed})
        for command, out in (("migrate", migrated), ("analyze", analysed)):
            done = run_cli([command, "-i", str(source), "-o", str(out), "-j", "2"], cwd=cwd)
            assert done.returncode in _ALLOWED[command], (seed, command, done.stderr)
            assert "Traceback" not in done.stderr, (seed, command, done.stderr)
        _check(world, {migrated, analysed}, before)
        assert list(cwd.iterdir()) == []
