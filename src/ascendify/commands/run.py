"""``ascendify run``: start CMD ARGS... as one process per accelerator card, on one node or many."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ascendify.errors import AscendifyError

if TYPE_CHECKING:
    from ascendify.launch import LaunchOptions

NAME = "run"
HELP = "Run a training command on every card of one node or many (davincirun/torchrun)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Every rank gets torch's variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, ...) and "
        "Ascend's (RANK_ID, RANK_SIZE, DEVICE_ID, RANK_TABLE_FILE, ...). Flags not given come from "
        "the platform (ModelArts/Volcano, PyTorchJob, Slurm, OpenMPI); --dry-run shows which."
    )
    from ascendify.launch.options import add_arguments as add_launcher_arguments

    add_launcher_arguments(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan as JSON and start nothing"
    )
    from ascendify.launch.manifests import DEFAULT_ACCELERATOR, KINDS

    kube = parser.add_argument_group("Kubernetes manifest instead of a run")
    kube.add_argument(
        "--emit",
        choices=KINDS,
        help="print a Volcano Job, Kubeflow PyTorchJob or MindCluster AscendJob",
    )
    kube.add_argument("--image", help="container image that has ascendify and the training code")
    kube.add_argument("--name", default="ascendify-job", help="job name (default: ascendify-job)")
    kube.add_argument("--accelerator", default=DEFAULT_ACCELERATOR, help="device resource per card")
    parser.add_argument("command", metavar="CMD", help="e.g. python")
    parser.add_argument(
        "args", nargs=argparse.REMAINDER, metavar="ARGS", help="passed through verbatim"
    )


def run(args: argparse.Namespace) -> int:
    from ascendify.launch.options import check, from_args

    _profile_steps_or_command(args)
    options = check(from_args(args))
    if args.emit:
        return _emit(args, options)
    if not options.nan_check or args.dry_run:
        return launch(options, dry_run=args.dry_run)
    return _launch_with_nan_check(options)


def _profile_steps_or_command(args: argparse.Namespace) -> None:
    """``--profile python train.py``: argparse took the command for STEPS; give it back."""
    from ascendify.perf.starthook import DEFAULT_STEPS, is_steps

    if args.profile is not None and not is_steps(args.profile):
        args.command, args.args = args.profile, [args.command, *args.args]
        args.profile = DEFAULT_STEPS


def _launch_with_nan_check(options: LaunchOptions) -> int:
    """The job with the NaN/inf sentinel armed in every rank, and what it found said at the end."""
    import tempfile

    from ascendify.compare.session import nan_sentinel, read_nan_check

    with tempfile.TemporaryDirectory(prefix="ascendify-nan-check-") as folder:
        saved = dict(os.environ)
        with nan_sentinel(Path(folder)) as env:
            os.environ.update(env)  # the ranks inherit the launcher's environment
            try:
                code = launch(options)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        found = read_nan_check(Path(folder))
    if found is not None:
        _say(f"first NaN/inf: {found.get('message', '')}")
    return code


def launch(options: LaunchOptions, dry_run: bool = False) -> int:
    """Resolve, then print the plan or run the job (shared with ``ascendify.davincirun``)."""
    from ascendify.launch import plan_to_json, preview, resolve_spec, run_job

    spec = resolve_spec(options)
    profile = options.profile
    if profile is not None:
        from ascendify.perf.starthook import profile_environment
        from ascendify.runfolder import profile_dir

        folder = profile_dir(spec.log_dir)
        spec = replace(spec, env={**spec.env, **profile_environment(folder, profile, spec.env)})
    if spec.launcher is not None and spec.launcher.disagreement:
        _say(spec.launcher.disagreement)
    if dry_run:
        print(json.dumps(plan_to_json(preview(spec)), indent=2))
        return 0
    nested = f", started as {spec.launcher.name} would" if spec.launcher else ""
    _say(
        f"node {spec.node_rank} of {spec.nnodes}, {spec.nproc_per_node} rank(s){nested} "
        f"({spec.origins.get('nproc_per_node', 'default')}); platform {spec.platform} "
        f"({spec.platform_reason}); logs in {spec.log_dir}"
    )
    result = run_job(spec, log=_say)
    _say(result.message)
    if profile is not None:
        _say(f"profile of steps {profile}: ascendify perf {result.log_dir}")
    if result.state == "failed":
        from ascendify.explain import cause_of

        cause = cause_of([result.log_dir])
        if cause is not None:
            _say(f"cause: {cause} (details: ascendify explain {result.log_dir})")
    _settle_console()
    return result.exit_code


def _settle_console() -> None:
    """Rank output the console's disk refused (stdout is the worker log of a job) is dropped, so
    that the exit code says how the job ended, not that the last of its output did not fit."""
    try:
        sys.stdout.flush()
    except OSError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _emit(args: argparse.Namespace, options: LaunchOptions) -> int:
    import yaml

    from ascendify.launch.manifests import JobManifest, render

    if not args.image:
        raise AscendifyError("--emit needs --image (the container image to run)")
    job = JobManifest(
        name=args.name, image=args.image, options=options, accelerator=args.accelerator
    )
    print(yaml.safe_dump(render(args.emit, job), sort_keys=False), end="")
    return 0


def _say(message: str) -> None:
    """Tell the user; stderr may be a log on a disk that filled, and the exit code still tells."""
    for line in message.splitlines():
        with contextlib.suppress(OSError):
            print(f"ascendify run: {line}", file=sys.stderr, flush=True)
