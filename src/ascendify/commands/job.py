"""``ascendify job``: training jobs from a spec, ModelArts-style, one sub-command per action."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascendify.terminal_text import printable

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from ascendify.jobs.spec import JobSpec
    from ascendify.jobs.store import JobStore

NAME = "job"
HELP = "Training jobs from a spec (code dir, boot file, flavor, nodes), ModelArts-style."


# Flags that map one-to-one to spec fields (the spec file's keys are these in snake_case); the
# launcher's settings a job passes through come from launch/options.py.
def _spec_flags() -> tuple[tuple[str, dict[str, Any]], ...]:
    """The spec fields as flags (built when parsing: the engine names come from the library)."""
    from ascendify.jobs.spec import ENGINES, MANIFEST_ENGINES

    return (
        (
            "--code-dir",
            {"metavar": "DIR", "help": "the code to snapshot (default: the spec's dir or .)"},
        ),
        ("--boot-file", {"metavar": "FILE", "help": "script in the code dir, run on every card"}),
        (
            "--boot-command",
            {
                "metavar": "'CMD ARGS'",
                "help": "a command line run instead of a boot file, in the job dir that holds "
                "the code under its own name, as on ModelArts, e.g. 'python proj/train.py 10 5'",
            },
        ),
        ("--module", {"action": "store_const", "const": True, "help": "boot file is a module"}),
        ("--no-python", {"action": "store_const", "const": True, "help": "boot file is a command"}),
        (
            "--auto",
            {"action": "store_const", "const": True, "help": "GPU code via the runtime redirect"},
        ),
        ("--data-url", {"metavar": "URL", "help": "input channel: path, s3:// or obs://"}),
        ("--train-url", {"metavar": "URL", "help": "output channel: path, s3:// or obs://"}),
        ("--log-url", {"metavar": "URL", "help": "also copy the logs here at the end"}),
        ("--nodes", {"metavar": "N", "help": "node count (default 1); MIN:MAX as --elastic"}),
        (
            "--elastic",
            {"metavar": "MIN:MAX", "help": "go on while MIN of the nodes remain (MAX = --nodes)"},
        ),
        ("--cards", {"metavar": "N", "help": "cards (ranks) per node (default 1)"}),
        (
            "--flavor",
            {"metavar": "STR", "help": "ModelArts flavor, e.g. 'Ascend: 8 | ARM: 192 cores'"},
        ),
        ("--engine", {"choices": ENGINES, "help": "(default local)"}),
        ("--name", {"help": "job name (default: the boot file's)"}),
        ("--address", {"metavar": "ADDR", "help": "Ray cluster address (default: RAY_ADDRESS)"}),
        (
            "--install-requirements",
            {"action": "store_const", "const": True, "help": "pip install the code's requirements"},
        ),
        ("--image", {"help": f"container image ({', '.join(MANIFEST_ENGINES)})"}),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Jobs are kept in $ASCENDIFY_JOBS_DIR (or --jobs-dir), else the user's data directory."
    )
    commands = parser.add_subparsers(dest="job_command", metavar="SUBCOMMAND", required=True)
    for name, help_text in (
        ("submit", "start a job and print its id (--wait follows it to the end)"),
        ("validate", "check a spec; names the bad field"),
    ):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _spec_arguments(sub)
        if name == "submit":
            sub.add_argument(
                "--wait", action="store_true", help="follow the job; exit 1 unless it succeeds"
            )
            sub.add_argument(
                "--stop-on-interrupt",
                action="store_true",
                help="with --wait: Ctrl-C stops the job (by default it detaches and the job runs on)",
            )
            sub.add_argument("--dry-run", action="store_true", help="print what would run")
    listing = commands.add_parser("list", help="jobs, newest first, with their progress")
    listing.add_argument("--limit", type=_limit, metavar="N", help="at most N jobs")
    commands.add_parser("flavors", help="the known ModelArts flavors (--flavor takes their ids)")
    ui = commands.add_parser("ui", help="serve the job pages (needs the ui extra)")
    ui.add_argument("--host", default="127.0.0.1", help="address to serve on (127.0.0.1)")
    ui.add_argument("--port", type=int, default=8422, help="port (8422; 0 picks a free one)")
    ui.add_argument(
        "--allow-actions", action="store_true", help="show stop and rerun buttons on the pages"
    )
    for name, help_text in (
        ("describe", "spec, state history, exit codes, root cause"),
        ("stop", "stop gracefully (SIGTERM, then SIGKILL); outputs are still uploaded"),
        ("rerun", "submit the same job again (--hyper K=V changes hyperparameters)"),
        ("rm", "forget an ended job and delete its directory"),
        ("logs", "worker logs of every node (rank-prefixed lines), or one node's or rank's"),
        ("metrics", "the series read from the ranks' output: loss, lr, throughput, ..."),
        ("top", "CPU, memory and accelerator use per node and rank, redrawn (like npu-smi)"),
    ):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("job_id", metavar="ID", help="job id (a unique prefix is enough)")
        if name == "logs":
            sub.add_argument("-f", "--follow", action="store_true", help="until the job ends")
            sub.add_argument(
                "--tail", type=_limit, metavar="N", help="from each log's last N lines on"
            )
            sub.add_argument("--node", type=int, metavar="N", help="node N's worker log")
            sub.add_argument("--rank", type=int, metavar="R", help="rank R's own log")
        if name == "rerun":
            sub.add_argument(
                "--hyper", action="append", default=[], metavar="K=V", help="repeatable"
            )
            sub.add_argument(
                "--unset-hyper",
                action="append",
                default=[],
                metavar="NAME",
                help="leave this hyperparameter out of the rerun (repeatable)",
            )
        if name == "top":
            sub.add_argument("--once", action="store_true", help="one frame, then exit")
        if name == "metrics":
            form = sub.add_mutually_exclusive_group()
            form.add_argument("--json", action="store_true", help="every point, as JSON")
            form.add_argument(
                "--csv", action="store_true", help="every point: name,rank,step,value,time"
            )
            sub.add_argument("--name", metavar="NAME", help="only this series (e.g. loss)")
            sub.add_argument("--rank", type=int, metavar="R", help="only rank R's series")
    for sub in commands.choices.values():
        sub.add_argument("--jobs-dir", type=Path, metavar="DIR", help="the job store")
    # Named from what is registered above, so the list stays true as sub-commands come.
    parser.description = f"{HELP.removesuffix('.')}: {', '.join(commands.choices)}."


def _limit(text: str) -> int:
    """``--limit N``, ``--tail N``: 0 or more (a negative count once dropped the oldest job)."""
    if not (text.isdecimal() and len(text) < 20):
        raise argparse.ArgumentTypeError(f"takes a count, 0 or more, not {text!r}")
    return int(text)


def _spec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", nargs="?", type=Path, metavar="SPEC", help="TOML or YAML spec")
    from ascendify.launch.options import JOB_SETTINGS
    from ascendify.launch.options import add_arguments as add_launcher_arguments

    for flag, options in _spec_flags():
        parser.add_argument(flag, **options)
    add_launcher_arguments(parser, JOB_SETTINGS, job=True)
    parser.add_argument("--hyper", action="append", default=[], metavar="K=V", help="repeatable")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V|NAME",
        help="repeatable; NAME alone takes the value from this environment (keeps it off argv)",
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME=REGEX",
        help="also read this series from the output: the regex's group is the value (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    if args.job_command == "validate":
        spec = _spec(args)
        print(
            f"{args.spec or 'flags'}: valid: {spec.name}, engine {spec.engine}, "
            f"{spec.nodes} node(s) x {spec.cards} card(s)"
        )
        return 0
    if args.job_command == "submit" and args.dry_run:
        return _dry_run(_spec(args))
    if args.job_command == "flavors":
        return _flavors()
    from ascendify.jobs import service
    from ascendify.jobs.store import JobStore, default_dir

    store = JobStore(args.jobs_dir or default_dir())
    service.reconcile(store)
    handler = {
        "submit": _submit,
        "list": _list,
        "describe": _describe,
        "logs": _logs,
        "stop": _stop,
        "rerun": _rerun,
        "rm": _rm,
        "metrics": _metrics,
        "top": _top,
        "ui": _ui,
    }[args.job_command]
    return handler(store, args)


def _spec(args: argparse.Namespace) -> JobSpec:
    from ascendify.jobs.spec import load_spec_file, pairs, resolve
    from ascendify.launch.options import JOB_SETTINGS

    _profile_steps_or_spec(args)
    raw = load_spec_file(args.spec) if args.spec is not None else {}
    keys = [flag[2:].replace("-", "_") for flag, _options in _spec_flags()]
    for key in (*keys, *JOB_SETTINGS):
        value = getattr(args, key)
        if value is not None:
            raw[key] = value
    for key, flag in (("hyper", "hyper"), ("env", "env"), ("metrics", "metric")):
        given = pairs(getattr(args, flag), key, os.environ if key == "env" else None)
        if given:
            raw[key] = {**(raw.get(key) or {}), **given}
    spec = resolve(raw)
    _warn_secret_hyperparameters(spec.hyper)
    return spec


def _profile_steps_or_spec(args: argparse.Namespace) -> None:
    """``--profile spec.toml``: argparse took the spec file for STEPS; give it back."""
    from ascendify.perf.starthook import DEFAULT_STEPS, is_steps

    if args.profile is not None and args.spec is None and not is_steps(args.profile):
        args.spec, args.profile = Path(args.profile), DEFAULT_STEPS


def _warn_secret_hyperparameters(hyper: Mapping[str, str]) -> None:
    from ascendify.jobs.spec import secret_hyperparameters

    for name in secret_hyperparameters(hyper):
        _say(
            f"warning: hyperparameter {name!r} looks like a secret: hyperparameters are on every "
            f"rank's command line, which the process list shows; pass it as --env {name.upper()} "
            "(its value is never stored or shown)"
        )


def _dry_run(spec: JobSpec) -> int:
    import yaml

    from ascendify.jobs.manifest import manifest, node_plans_json
    from ascendify.jobs.spec import MANIFEST_ENGINES

    if spec.engine in MANIFEST_ENGINES:
        print(yaml.safe_dump(manifest(spec), sort_keys=False), end="")
    else:
        print(json.dumps(node_plans_json(spec), indent=2))
    return 0


def _submit(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.submit(store, _spec(args))
    print(job.id, flush=True)
    return _follow_to_end(store, job.id, args.stop_on_interrupt) if args.wait else 0


def _follow_to_end(store: JobStore, job_id: str, stop_on_interrupt: bool) -> int:
    from ascendify.jobs import service

    job = store.get(job_id)
    try:
        _write(service.follow(store, job.id, service.log_files(store, job, None, None)))
        job = service.wait(store, job.id)
    except KeyboardInterrupt:
        if not stop_on_interrupt:
            _say(
                f"detached: job {job.id} keeps running; `ascendify job logs {job.id} -f` to "
                f"follow it again, `ascendify job stop {job.id}` to stop it"
            )
            return 130
        _say(f"stopping job {job.id} (Ctrl-C)")
        job = service.stop(store, job.id)
    _say(f"job {job.id} {job.state}" + (f": {job.cause}" if job.cause else ""))
    return 0 if job.state == "succeeded" else 1


def _write(lines: Iterator[bytes]) -> None:
    for line in lines:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def _list(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs.cause import job_cause
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.metrics import jobs_progress
    from ascendify.jobs.report import list_table

    jobs = store.jobs()
    jobs = jobs[: args.limit] if args.limit is not None else jobs
    causes = {
        job.id: job_cause(job, JobLayout(store.job_dir(job.id), job.id)).get("short")
        for job in jobs
    }
    print(printable(list_table(jobs, jobs_progress(store, jobs), causes)))
    return 0


def _flavors() -> int:
    from ascendify.jobs.flavor import KNOWN_FLAVORS, parse_flavor

    rows = [("ID", "CARDS", "FLAVOR")] + [
        (flavor_id, str(parse_flavor(text).cards), text) for flavor_id, text in KNOWN_FLAVORS
    ]
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    for row in rows:
        print(f"{row[0]:<{width[0]}}  {row[1]:<{width[1]}}  {row[2]}")
    return 0


def _metrics(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.metrics import read_series

    job = store.get(args.job_id)
    found = read_series(JobLayout(store.job_dir(job.id), job.id).metrics, args.name, args.rank)
    if args.json:
        print(json.dumps({"job": job.id, "series": [s.to_json() for s in found]}))
    elif args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(("name", "rank", "step", "value", "time"))
        for one in found:
            for step, value, stamp in zip(one.steps, one.values, one.times, strict=True):
                writer.writerow((one.name, one.rank, "" if step is None else step, value, stamp))
    elif not found and job.active:
        _say(f"no metrics read from job {job.id} yet")
    elif not found:
        _say(
            f"job {job.id} ended without metrics: no line of its output matched a built-in rule "
            "(docs/jobs.md, Metrics); read your own with --metric NAME=REGEX when you submit it"
        )
    for one in found if not (args.json or args.csv) else ():
        steps = [step for step in one.steps if step is not None]
        span = f", steps {steps[0]}..{steps[-1]}" if steps else ""
        print(
            f"{one.name} ({'events' if one.rank < 0 else f'rank {one.rank}'}): "
            f"{len(one.values)} points{span}, last {one.values[-1]:g}, "
            f"min {min(one.values):g}, max {max(one.values):g}"
        )
    return 0


def _top(store: JobStore, args: argparse.Namespace) -> int:
    """The job's last resource sample; without ``--once``, redrawn until the job ends."""
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.metrics import PROGRESS_BYTES, read_points
    from ascendify.jobs.report import top_frame
    from ascendify.jobs.resources import INTERVAL

    job = store.get(args.job_id)
    path = JobLayout(store.job_dir(job.id), job.id).resources
    while True:
        frame = top_frame(job, read_points(path, last_bytes=PROGRESS_BYTES))
        if args.once or not job.active:
            print(frame)
            return 0
        print(f"\x1b[H\x1b[2J{frame}", flush=True)  # the screen cleared, as top redraws
        try:
            time.sleep(INTERVAL)
        except KeyboardInterrupt:
            return 0
        job = store.get(job.id)


def _ui(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.web import serve

    serve(
        store,
        host=args.host,
        port=args.port,
        allow_actions=args.allow_actions,
        ready=lambda message: _say(f"job pages at {message}" if "://" in message else message),
    )
    return 0


def _describe(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.explain.analysis import render
    from ascendify.jobs.cause import explain_job
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.report import describe

    job = store.get(args.job_id)
    layout = JobLayout(store.job_dir(job.id), job.id)
    verdict = explain_job(layout) if job.state == "failed" else None
    why = render(verdict) if verdict is not None and verdict.found else None
    # Log text (an error, a stack, a verdict) must not drive the terminal it is shown on.
    print(printable(describe(job, store.events(job.id), store.nodes(job.id), layout, why)))
    from ascendify.perf.jobs import describe_lines, job_profile

    profile = job_profile(layout, job.nodes, job.cards)  # submitted with --profile
    if profile is not None:
        print(printable("\n".join(["", *describe_lines(profile)])))
    return 0


def _logs(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = store.get(args.job_id)
    paths = service.log_files(store, job, args.node, args.rank)
    starts = [0 if args.tail is None else service.tail_start(path, args.tail) for path in paths]
    if args.follow:
        _write(service.follow(store, job.id, paths, starts))
        return 0
    for path, start in zip(paths, starts, strict=True):
        if not path.exists():
            _say(f"no log yet at {path}")
        _write(service.log_blocks(path, start, whole=True))
    return 0


def _stop(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.stop(store, args.job_id)
    _say(f"job {job.id} {job.state}")
    return 0 if job.state in ("stopped", "succeeded", "failed") else 1


def _rerun(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service
    from ascendify.jobs.spec import pairs

    hyper = pairs(args.hyper, "hyper")
    _warn_secret_hyperparameters(hyper)
    print(service.rerun(store, args.job_id, hyper=hyper, unset=args.unset_hyper).id)
    return 0


def _rm(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.remove(store, args.job_id)
    _say(f"removed job {job.id}")
    return 0


def _say(message: str) -> None:
    print(f"ascendify job: {message}", file=sys.stderr, flush=True)
