"""Take the job page screenshots of docs/jobs.md: a finished job, a restarted job and one job's
curves over another's, from jobs made here the way a run leaves them.

The jobs are pytorch/examples' word_language_model on 1 node x 2 cards: their logs print that
program's lines (training, validation at each epoch's end, test at the end), which ascendify's own
metric reader turns into the series the page draws. The pages are served by ``ascendify.web`` and
shot in headless Chromium (selenium and the system's chromium and chromedriver), each cropped to
the page's top down to its curves.

Usage::

    python -m scripts.page_screenshots            # writes docs/images/job-*.png
    python -m scripts.page_screenshots --out DIR
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import MetricParser, Point, append_points, parse_lines
from ascendify.jobs.store import JobRecord, JobStore
from ascendify.web import bind

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

OUT = Path(__file__).resolve().parent.parent / "docs" / "images"
WINDOW = (1240, 1000)  # two charts a row
BATCHES = 84  # a word_language_model epoch's batches on its small corpus
LOG_INTERVAL = 20
EPOCH_SECONDS = 30.0
RANKS = 2
DOCS_IMAGE_BYTES = 150_000  # each picture at most


def chromium(window: tuple[int, int] = WINDOW) -> WebDriver:
    """Headless Chromium driven by selenium: the system's chromium and chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        raise SystemExit("no chromium and chromedriver on PATH")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={window[0]},{window[1]}", "--force-device-scale-factor=1",
                     "--hide-scrollbars"):  # fmt: skip
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    return driver


def training_lines(epoch: int, rank: int, lr: float, last_batch: int = BATCHES) -> list[str]:
    """One epoch of word_language_model's output, as the program formats it; an epoch cut
    short (``last_batch``) has no validation line."""
    lines = []
    for batch in range(LOG_INTERVAL, last_batch + 1, LOG_INTERVAL):
        step = (epoch - 1) * BATCHES + batch
        loss = 4.6 + 2.4 / (1 + step / (12 * lr)) + 0.02 * rank + 0.03 * ((step * 7) % 5)
        lines.append(
            f"| epoch {epoch:3d} | {batch:5d}/{BATCHES:5d} batches | lr {lr:02.2f} | "
            f"ms/batch {41.5 + rank + (step % 3):5.2f} | loss {loss:5.2f} | ppl {2.718**loss:8.2f}"
        )
    if last_batch < BATCHES:
        return lines
    valid = 4.7 + 2.2 / (1 + epoch * BATCHES / (12 * lr))
    lines.append(
        f"| end of epoch {epoch:3d} | time: {EPOCH_SECONDS:5.2f}s | valid loss {valid:5.2f} | "
        f"valid ppl {2.718**valid:8.2f}"
    )
    return lines


def write_attempt(
    layout: JobLayout, epochs: range, lr: float, start: float, last_batch: int = BATCHES
) -> float:
    """Each rank's lines of ``epochs`` (the last up to ``last_batch``) in its log and their points
    in the metrics file, the resource samples beside them, from ``start``; returns when the last
    epoch ended."""
    parser = MetricParser()
    now = start
    for epoch in epochs:
        for rank in range(RANKS):
            lines = training_lines(epoch, rank, lr, last_batch if epoch == epochs[-1] else BATCHES)
            with layout.rank_log(rank, rank).open("a") as log:
                log.write("\n".join(lines) + "\n")
            for at, line in enumerate(lines):
                moment = now + EPOCH_SECONDS * (at + 1) / len(lines)
                append_points(
                    layout.metrics, parse_lines(parser, rank, f"{line}\n".encode(), moment)
                )
        append_points(layout.resources, _resource_samples(now))
        now += EPOCH_SECONDS
    return now


def _resource_samples(start: float) -> Iterator[Point]:
    """An epoch's CPU and memory samples, one every 3 s, as the job runner takes them."""
    for tick in range(int(EPOCH_SECONDS // 3)):
        moment = start + 3 * tick
        for rank in range(RANKS):
            yield Point(rank, "cpu", None, 96.0 + 3 * ((tick + rank) % 2), moment)
            yield Point(rank, "mem", None, 880.0 + 4 * tick + 30 * rank, moment)


def finished_job(store: JobStore, name: str, lr: float, epochs: int = 3) -> JobRecord:
    """A job that ran ``epochs`` epochs and its test, and succeeded."""
    job, layout = _new_job(store, name, lr)
    ended = write_attempt(layout, range(1, epochs + 1), lr, time.time() - epochs * EPOCH_SECONDS)
    _test_line(layout, ended)
    store.transition(job.id, "succeeded", exit_code=0)
    return store.get(job.id)


def restarted_job(store: JobStore, name: str, lr: float) -> JobRecord:
    """A job whose rank 1 failed in epoch 3; the restart resumed from epoch 2's checkpoint and
    trained epoch 3 again."""
    job, layout = _new_job(store, name, lr)
    start = time.time() - 6 * EPOCH_SECONDS
    failed_at = write_attempt(layout, range(1, 4), lr, start, last_batch=2 * LOG_INTERVAL)
    with layout.rank_log(1, 1).open("a") as log:
        log.write(
            "RuntimeError: NPU function error: call aclnnMatmul failed, error code is 507015\n"
        )
    restart_at = failed_at + 4
    ended = write_attempt(layout, range(3, 5), lr, restart_at)
    _test_line(layout, ended)
    first = {"attempt": 0, "start": start, "end": failed_at, "state": "failed", "cause": "exit",
             "reason": "rank 1 (node 0, local rank 1) failed first: exit code 1",
             "exit_codes": {"0": -15, "1": 1}, "stacks": {}}  # fmt: skip
    second = {"attempt": 1, "start": restart_at, "end": ended, "state": "succeeded",
              "cause": None, "reason": None, "exit_codes": {"0": 0, "1": 0}, "stacks": {}}  # fmt: skip
    layout.launcher_dir(0).mkdir(parents=True, exist_ok=True)
    (layout.launcher_dir(0) / "run_summary.json").write_text(
        json.dumps({"state": "succeeded", "attempts": [first, second]})
    )
    store.record_attempt(job.id, 2, "attempt 0 ended (exit): rank 1 exited with 1; restart 1 of 1")
    store.transition(job.id, "succeeded", exit_code=0)
    return store.get(job.id)


def _new_job(store: JobStore, name: str, lr: float) -> tuple[JobRecord, JobLayout]:
    spec = {"name": name, "engine": "local", "nodes": 1, "cards": 2, "code_dir": "word_language_model",
            "boot_file": "main.py", "hyper": {"lr": str(lr), "epochs": "4"}, "env": {},
            "flavor": "modelarts.kat1.xlarge", "max_restarts": 1}  # fmt: skip
    job = store.create(spec)
    store.transition(job.id, "running", "engine local")
    layout = JobLayout(store.job_dir(job.id), job.id)
    layout.logs.mkdir(parents=True)
    return job, layout


def _test_line(layout: JobLayout, at: float) -> None:
    line = "| End of training | test loss  4.98 | test ppl   145.6"
    append_points(layout.metrics, parse_lines(MetricParser(), 0, f"{line}\n".encode(), at))


@contextmanager
def served(store: JobStore) -> Iterator[str]:
    """The pages of ``store`` on a free port of 127.0.0.1, in a thread: their base URL."""
    pages = bind(store, host="127.0.0.1", port=0, allow_actions=False)
    threading.Thread(target=pages.server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield pages.base
    finally:
        pages.server.shutdown()
        pages.server.server_close()


def shot(driver: WebDriver, url: str, path: Path, down_to: str, ready: Callable[[], bool]) -> None:
    """``url`` shot from the page's top down to the element ``down_to`` (a CSS selector)."""
    driver.get(url)
    deadline = time.monotonic() + 30
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url}: the curves were not drawn in 30 s")
        time.sleep(0.1)
    bottom = driver.execute_script(
        "const box = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return Math.ceil(box.bottom + window.scrollY) + 8;",
        down_to,
    )
    width = driver.execute_script("return document.documentElement.clientWidth;")
    clip = {"x": 0, "y": 0, "width": width, "height": bottom, "scale": 1}
    image = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(image["data"]))


def curves_drawn(driver: WebDriver, metric: str, lines: int) -> Callable[[], bool]:
    """Whether the chart of ``metric`` has its ``lines`` on an x scale (what uPlot draws them
    on) and the page shows the job's details."""
    return lambda: bool(
        driver.execute_script(
            "const box = document.querySelector(`.chart[data-metric='${arguments[0]}']`);"
            "return box !== null && box.dataset.lines === String(arguments[1])"
            " && charts.get(arguments[0]).plot.scales.x.min !== null"
            " && document.getElementById('summary').textContent !== '';",
            metric,
            lines,
        )
    )


def take(driver: WebDriver, out: Path) -> list[Path]:
    """The three screenshots in ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store = JobStore(Path(folder) / "store")
        finished = finished_job(store, "wlm-lr20", 20.0)
        restarted = restarted_job(store, "wlm-restarted", 20.0)
        other = finished_job(store, "wlm-lr5", 5.0)
        with served(store) as base:
            paths = [out / "job-finished.png", out / "job-restarted.png", out / "job-compare.png"]
            shot(driver, f"{base}jobs/{finished.id}", paths[0], ".chart[data-metric='valid_ppl']",
                 curves_drawn(driver, "loss", 2))  # fmt: skip
            shot(driver, f"{base}jobs/{restarted.id}", paths[1], ".chart[data-metric='ppl']",
                 curves_drawn(driver, "loss", 4))  # fmt: skip
            shot(driver, f"{base}jobs/{finished.id}?compare={other.id}", paths[2],
                 ".chart[data-metric='valid_loss']", curves_drawn(driver, "loss", 4))  # fmt: skip
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the PNGs go ({OUT})")
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line per request
    driver = chromium()
    try:
        for path in take(driver, args.out):
            size = path.stat().st_size
            print(f"{path} ({size // 1024} KiB)")
            if size > DOCS_IMAGE_BYTES:
                print(f"warning: {path.name} is over {DOCS_IMAGE_BYTES // 1000} kB")
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
