"""``ascendify job``: training jobs from a spec, ModelArts-style, one sub-command per action."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ascendify.jobs.spec import JobSpec
    from ascendify.jobs.store import JobStore

NAME = "job"
HELP = "Training jobs from a spec (code dir, boot file, flavor, nodes), ModelArts-style."

# Flags that map one-to-one to spec fields (the spec file's keys are these in snake_case).
_SPEC_FLAGS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--code-dir",
        {"metavar": "DIR", "help": "the code to snapshot (default: the spec's dir or .)"},
    ),
    ("--boot-file", {"metavar": "FILE", "help": "script in the code dir, run on every card"}),
    ("--module", {"action": "store_const", "const": True, "help": "boot file is a module"}),
    ("--no-python", {"action": "store_const", "const": True, "help": "boot file is a command"}),
    (
        "--auto",
        {"action": "store_const", "const": True, "help": "GPU code via the runtime redirect"},
    ),
    ("--data-url", {"metavar": "URL", "help": "input channel: path, s3:// or obs://"}),
    ("--train-url", {"metavar": "URL", "help": "output channel: path, s3:// or obs://"}),
    ("--log-url", {"metavar": "URL", "help": "also copy the logs here at the end"}),
    ("--nodes", {"metavar": "N", "help": "node count (default 1)"}),
    ("--cards", {"metavar": "N", "help": "cards (ranks) per node (default 1)"}),
    ("--flavor", {"metavar": "STR", "help": "ModelArts flavor, e.g. 'Ascend: 8 | ARM: 192 cores'"}),
    ("--engine", {"choices": ("local", "ray", "volcano", "pytorchjob"), "help": "(default local)"}),
    ("--name", {"help": "job name (default: the boot file's)"}),
    ("--address", {"metavar": "ADDR", "help": "Ray cluster address (default: RAY_ADDRESS)"}),
    (
        "--install-requirements",
        {"action": "store_const", "const": True, "help": "pip install the code's requirements"},
    ),
    ("--image", {"help": "container image (volcano, pytorchjob)"}),
    ("--grace-period", {"type": float, "metavar": "S", "help": "SIGTERM -> SIGKILL wait (5)"}),
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
            sub.add_argument("--dry-run", action="store_true", help="print what would run")
    listing = commands.add_parser("list", help="jobs, newest first")
    listing.add_argument("--limit", type=int, metavar="N", help="at most N jobs")
    for name, help_text in (
        ("describe", "spec, state history, exit codes, root cause"),
        ("stop", "stop gracefully (SIGTERM, then SIGKILL); outputs are still uploaded"),
        ("rerun", "submit the same job again"),
        ("rm", "forget an ended job and delete its directory"),
        ("logs", "worker logs (rank-prefixed lines), or one node's or rank's"),
    ):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("job_id", metavar="ID", help="job id (a unique prefix is enough)")
        if name == "logs":
            sub.add_argument("-f", "--follow", action="store_true", help="until the job ends")
            sub.add_argument("--node", type=int, metavar="N", help="node N's worker log")
            sub.add_argument("--rank", type=int, metavar="R", help="rank R's own log")
    for sub in commands.choices.values():
        sub.add_argument("--jobs-dir", type=Path, metavar="DIR", help="the job store")
    # Named from what is registered above, so the list stays true as sub-commands come.
    parser.description = f"{HELP.removesuffix('.')}: {', '.join(commands.choices)}."


def _spec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", nargs="?", type=Path, metavar="SPEC", help="TOML or YAML spec")
    for flag, options in _SPEC_FLAGS:
        parser.add_argument(flag, **options)
    parser.add_argument("--hyper", action="append", default=[], metavar="K=V", help="repeatable")
    parser.add_argument("--env", action="append", default=[], metavar="K=V", help="repeatable")


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
    }[args.job_command]
    return handler(store, args)


def _spec(args: argparse.Namespace) -> JobSpec:
    from ascendify.jobs.spec import load_spec_file, pairs, resolve

    raw = load_spec_file(args.spec) if args.spec is not None else {}
    for flag, _options in _SPEC_FLAGS:
        key = flag[2:].replace("-", "_")
        value = getattr(args, key)
        if value is not None:
            raw[key] = value
    for key in ("hyper", "env"):
        given = pairs(getattr(args, key), key)
        if given:
            raw[key] = {**(raw.get(key) or {}), **given}
    return resolve(raw)


def _dry_run(spec: JobSpec) -> int:
    import yaml

    from ascendify.jobs.manifest import manifest, node_plans_json

    if spec.engine in ("volcano", "pytorchjob"):
        print(yaml.safe_dump(manifest(spec), sort_keys=False), end="")
    else:
        print(json.dumps(node_plans_json(spec), indent=2))
    return 0


def _submit(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.submit(store, _spec(args))
    print(job.id, flush=True)
    return _follow_to_end(store, job.id) if args.wait else 0


def _follow_to_end(store: JobStore, job_id: str) -> int:
    from ascendify.jobs import service

    job = store.get(job_id)
    for path in service.log_files(store, job, node=0, rank=None):
        for line in service.follow(store, job.id, path):
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
    job = service.wait(store, job.id)
    _say(f"job {job.id} {job.state}" + (f": {job.cause}" if job.cause else ""))
    return 0 if job.state == "succeeded" else 1


def _list(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs.report import list_table

    jobs = store.jobs()
    print(list_table(jobs[: args.limit] if args.limit is not None else jobs))
    return 0


def _describe(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.report import describe

    job = store.get(args.job_id)
    layout = JobLayout(store.job_dir(job.id), job.id)
    print(describe(job, store.events(job.id), store.nodes(job.id), layout))
    return 0


def _logs(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = store.get(args.job_id)
    paths = service.log_files(store, job, args.node, args.rank)
    if args.follow:
        if len(paths) > 1:
            paths = paths[:1]
            _say("following node 0's worker log (--node N for another)")
        lines = service.follow(store, job.id, paths[0])
        for line in lines:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        return 0
    for path in paths:
        try:
            sys.stdout.buffer.write(path.read_bytes())
        except FileNotFoundError:
            _say(f"no log yet at {path}")
    sys.stdout.buffer.flush()
    return 0


def _stop(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.stop(store, args.job_id)
    _say(f"job {job.id} {job.state}")
    return 0 if job.state in ("stopped", "succeeded", "failed") else 1


def _rerun(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    print(service.rerun(store, args.job_id).id)
    return 0


def _rm(store: JobStore, args: argparse.Namespace) -> int:
    from ascendify.jobs import service

    job = service.remove(store, args.job_id)
    _say(f"removed job {job.id}")
    return 0


def _say(message: str) -> None:
    print(f"ascendify job: {message}", file=sys.stderr, flush=True)
