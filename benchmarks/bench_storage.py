"""Staging throughput of ascendify.storage.copy_tree against a plain fsspec copy, same run.

Both copy from an S3-protocol server on 127.0.0.1 (moto's server mode, in its own process so it
does not share this interpreter's lock) into a fresh local directory: many small files and one
large file. The baseline is what a script would write by hand,
``fs.get(prefix, local, recursive=True)`` on an s3fs filesystem. Also shown: a second staging of
the same tree (everything already present) and the upload direction against
``fs.put(local, prefix, recursive=True)``. The two take turns; figures are medians over
``--repeat`` runs each; the ratio is baseline time / ascendify time (above 1: ascendify is faster).

    python benchmarks/bench_storage.py [--small-files 500] [--small-kib 4] [--large-mib 64]
                                       [--repeat 5] [--workers 64]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import fsspec

from ascendify.storage import S3Settings, copy_tree

BUCKET = "bench"
KEY, SECRET = "bench-key-id", "bench-secret"


@dataclass(frozen=True)
class Tree:
    prefix: str
    local: Path
    files: int
    size: int


@dataclass(frozen=True)
class Bench:
    plain: Any  # the baseline s3fs filesystem
    settings: S3Settings
    repeat: int
    workers: int  # concurrent transfers of copy_tree

    def time(self, run: Callable[[Path], object], prepare: Callable[[Path], None]) -> float:
        """Seconds ``run(dir)`` takes on a fresh directory set up by ``prepare``."""
        target = Path(tempfile.mkdtemp(prefix="bench-storage-"))
        try:
            prepare(target)
            self.plain.invalidate_cache()  # no listing cache: each run is a new job
            started = time.perf_counter()
            run(target)
            return time.perf_counter() - started
        finally:
            shutil.rmtree(target, ignore_errors=True)

    def compare(
        self,
        baseline: Callable[[Path], object],
        ours: Callable[[Path], object],
        prepare: Callable[[Path], None],
    ) -> tuple[float, float]:
        """Median times of both, in turns (AB, BA, ...) so machine load and order hit both alike."""
        times: dict[str, list[float]] = {"baseline": [], "ours": []}
        for turn in range(self.repeat):
            order = [("baseline", baseline), ("ours", ours)]
            for name, run in order if turn % 2 == 0 else reversed(order):
                times[name].append(self.time(run, prepare))
        return statistics.median(times["baseline"]), statistics.median(times["ours"])

    def stage(self, tree: Tree, target: Path) -> None:
        copy_tree(
            f"s3://{BUCKET}/{tree.prefix}",
            str(target),
            settings=self.settings,
            workers=self.workers,
            progress=False,
        )


def report(name: str, tree: Tree, times: tuple[float, float]) -> None:
    baseline, ours = times
    mib = tree.size / 2**20
    print(
        f"{name:<34} files={tree.files:<5} {mib:6.1f} MiB | fsspec {baseline * 1000:8.1f} ms "
        f"({mib / baseline:7.1f} MiB/s, {tree.files / baseline:6.0f} files/s) | ascendify "
        f"{ours * 1000:8.1f} ms ({mib / ours:7.1f} MiB/s, {tree.files / ours:6.0f} files/s) | "
        f"ratio {baseline / ours:5.2f}"
    )


def seed(plain: Any, root: Path, args: argparse.Namespace) -> list[Tree]:
    """Write the small-file tree and the large file locally and upload both."""
    small = root / "small"
    for index in range(args.small_files):
        path = small / f"d{index % 10}" / f"f{index:05d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(args.small_kib * 1024))
    large = root / "large"
    large.mkdir()
    (large / "model.bin").write_bytes(os.urandom(args.large_mib * 2**20))
    trees = [
        Tree("small", small, args.small_files, args.small_files * args.small_kib * 1024),
        Tree("large", large, 1, args.large_mib * 2**20),
    ]
    for tree in trees:
        plain.put(str(tree.local), f"{BUCKET}/{tree.prefix}", recursive=True)
    return trees


def bench_downloads(bench: Bench, tree: Tree) -> None:
    def baseline(target: Path) -> None:
        bench.plain.get(f"{BUCKET}/{tree.prefix}/", f"{target}/", recursive=True)

    def ours(target: Path) -> None:
        bench.stage(tree, target)

    def empty(_: Path) -> None:
        pass

    def staged(target: Path) -> None:
        bench.stage(tree, target)

    report(f"download {tree.prefix}", tree, bench.compare(baseline, ours, empty))
    report(f"download {tree.prefix}, already staged", tree, bench.compare(baseline, ours, staged))


def bench_uploads(bench: Bench, tree: Tree) -> None:
    runs = itertools.count()  # each run uploads to a new prefix: nothing there to skip

    def baseline(_: Path) -> None:
        bench.plain.put(str(tree.local), f"{BUCKET}/plain-{next(runs)}", recursive=True)

    def ours(_: Path) -> None:
        url = f"s3://{BUCKET}/ours-{next(runs)}"
        copy_tree(
            str(tree.local), url, settings=bench.settings, workers=bench.workers, progress=False
        )

    def nothing(_: Path) -> None:
        pass

    report(f"upload {tree.prefix}", tree, bench.compare(baseline, ours, nothing))


@contextmanager
def s3_server() -> Iterator[str]:
    """moto's S3 server in a child process on a free loopback port; yields its endpoint."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the moto server did not start") from None
                time.sleep(0.1)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small-files", type=int, default=500)
    parser.add_argument("--small-kib", type=int, default=4)
    parser.add_argument("--large-mib", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=64, help="copy_tree's concurrency")
    args = parser.parse_args()

    with s3_server() as endpoint:
        run(endpoint, args)
    return 0


def run(endpoint: str, args: argparse.Namespace) -> None:
    env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    plain = fsspec.filesystem(
        "s3", endpoint_url=endpoint, key=KEY, secret=SECRET, skip_instance_cache=True
    )
    bench = Bench(plain, S3Settings.from_env(env), args.repeat, args.workers)
    source = Path(tempfile.mkdtemp(prefix="bench-storage-source-"))
    try:
        plain.mkdir(BUCKET)
        trees = seed(plain, source, args)
        print(
            f"S3 server on {endpoint}, {os.cpu_count()} CPUs, median of {args.repeat} runs, "
            f"copy_tree workers={args.workers}"
        )
        for tree in trees:
            bench_downloads(bench, tree)
        for tree in trees:
            bench_uploads(bench, tree)
    finally:
        shutil.rmtree(source, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
