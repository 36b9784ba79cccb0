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
    add = parser.add_argument
    add(
        "--nproc-per-node",
        "--nproc_per_node",
        metavar="N|auto",
        help="ranks on this node (default: auto = cards)",
    )
    add(
        "--nnodes",
        metavar="N|MIN:MAX",
        help="number of nodes; MIN:MAX goes on while at least MIN remain (torchrun's spelling)",
    )
    add("--node-rank", "--node_rank", type=int, metavar="I", help="this node's index, from 0")
    add("--master-addr", "--master_addr", metavar="ADDR", help="address of node 0")
    add(
        "--master-port", "--master_port", type=int, metavar="PORT", help="rendezvous port on node 0"
    )
    add(
        "--local-addr",
        "--local_addr",
        metavar="ADDR",
        help="this node's address (rank-table server_id)",
    )
    add(
        "--hccn-conf",
        "--hccn_conf",
        type=Path,
        metavar="FILE",
        help="device IPs (address_<id>=ip lines)",
    )
    add(
        "--log-dir",
        "--log_dir",
        type=Path,
        metavar="DIR",
        help="per-rank log files go here (default: a new folder under "
        "$XDG_CACHE_HOME/ascendify/logs, else ~/.cache/ascendify/logs)",
    )
    add(
        "--job-id",
        "--job_id",
        metavar="ID",
        help="JOB_ID for the ranks (default: from the platform)",
    )
    add(
        "--cwd",
        type=Path,
        metavar="DIR",
        help="the ranks' working directory (default: the current one)",
    )
    add("-m", "--module", action="store_true", help="CMD is a Python module: run `python -m CMD`")
    add(
        "--no-python",
        "--no_python",
        action="store_true",
        help="run CMD as given even if it ends in .py",
    )
    add(
        "-t",
        "--tee",
        type=int,
        choices=range(4),
        default=3,
        help="console: 0 none, 1 stdout, 2 stderr, 3 both",
    )
    add(
        "--local-ranks-filter",
        "--local_ranks_filter",
        metavar="R,R",
        help="show only these local ranks",
    )
    add(
        "--grace-period", type=float, default=10.0, metavar="S", help="SIGTERM -> SIGKILL wait (10)"
    )
    add(
        "--join-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="wait for nodes / rank table (300)",
    )
    add("--dry-run", action="store_true", help="print the plan as JSON and start nothing")
    recovery = parser.add_argument_group(
        "recovery",
        "A failed rank, a lost node or a hang stops every rank of every node; with restarts left "
        "the whole job starts again (ASCENDIFY_RESTART_COUNT, TORCHELASTIC_RESTART_COUNT).",
    )
    recovery.add_argument(
        "--max-restarts",
        "--max_restarts",
        type=int,
        default=0,
        metavar="N",
        help="restart the job up to N times (0)",
    )
    recovery.add_argument(
        "--hang-timeout",
        type=float,
        default=0.0,
        metavar="S",
        help="no output nor progress (I/O, Python stack) from any rank for S seconds is a hang: "
        "record every rank's stack (0: off; else at least 1)",
    )
    recovery.add_argument(
        "--nan-check",
        action="store_true",
        help="every rank checks each torch operator's output: the first NaN or inf ends the job, "
        "naming the rank, step, operator, module and line (as compare dump --nan-check)",
    )
    from ascendify.perf.starthook import DEFAULT_STEPS

    recovery.add_argument(
        "--profile",
        nargs="?",
        const=DEFAULT_STEPS,
        metavar="STEPS",
        help="profile steps FIRST-LAST of every rank (optimizer steps, from 0; default "
        f"{DEFAULT_STEPS}) into the log dir's profile/rank_<r>/; read them with "
        "`ascendify perf LOG_DIR`",
    )
    recovery.add_argument(
        "--resume-from-latest",
        metavar="GLOB",
        help="pass the newest complete matching file (relative: in --train_url's folder) as "
        "--resume=PATH",
    )
    channels = parser.add_argument_group(
        "input/output channels",
        "--data_url and --train_url values that are s3:// or obs:// URLs are staged to local "
        "dirs of the current folder, ./inputs/<name>_0 and ./outputs/<name>_0 (inputs before "
        "the ranks start, outputs during and after the job; kept afterwards) and the ranks "
        "get the local paths; MA_INPUTS/MA_OUTPUTS are read too.",
    )
    channels.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME",
        help="also stage --NAME_url as an input channel (repeatable)",
    )
    channels.add_argument(
        "--output",
        action="append",
        default=[],
        metavar="NAME",
        help="also upload --NAME_url as an output channel (repeatable)",
    )
    channels.add_argument(
        "--upload-interval",
        "--upload_interval",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds between output uploads while the job runs (60)",
    )
    from ascendify.launch.manifests import KINDS

    kube = parser.add_argument_group("Kubernetes manifest instead of a run")
    kube.add_argument(
        "--emit",
        choices=KINDS,
        help="print a Volcano Job, Kubeflow PyTorchJob or MindCluster AscendJob",
    )
    kube.add_argument("--image", help="container image that has ascendify and the training code")
    kube.add_argument("--name", default="ascendify-job", help="job name (default: ascendify-job)")
    kube.add_argument(
        "--accelerator", default="huawei.com/Ascend910", help="device resource per card"
    )
    add("command", metavar="CMD", help="e.g. python")
    add("args", nargs=argparse.REMAINDER, metavar="ARGS", help="passed through verbatim")


def run(args: argparse.Namespace) -> int:
    from ascendify.launch import LaunchOptions

    _profile_steps_or_command(args)
    command = (args.command, *args.args)
    if args.emit:
        return _emit(args, command)
    if args.no_python and args.module:
        raise AscendifyError("--no-python and --module exclude each other")
    options = LaunchOptions(
        command=command,
        nproc_per_node=_nproc(args.nproc_per_node),
        nnodes=_nnodes(args.nnodes)[1],
        min_nnodes=_nnodes(args.nnodes)[0],
        node_rank=args.node_rank,
        master_addr=args.master_addr,
        master_port=args.master_port,
        local_addr=args.local_addr,
        hccn_conf=args.hccn_conf,
        log_dir=args.log_dir,
        job_id=args.job_id,
        module=args.module,
        verbatim=args.no_python,
        tee=args.tee,
        local_ranks_filter=_ranks(args.local_ranks_filter),
        grace_period=args.grace_period,
        join_timeout=args.join_timeout,
        inputs=tuple(args.input),
        outputs=tuple(args.output),
        upload_interval=args.upload_interval,
        max_restarts=args.max_restarts,
        hang_timeout=args.hang_timeout,
        resume_from_latest=args.resume_from_latest,
        cwd=args.cwd,
    )
    if not args.nan_check or args.dry_run:
        return launch(options, dry_run=args.dry_run, profile=args.profile)
    return _launch_with_nan_check(options, args.profile)


def _profile_steps_or_command(args: argparse.Namespace) -> None:
    """``--profile python train.py``: argparse took the command for STEPS; give it back."""
    from ascendify.perf.starthook import DEFAULT_STEPS, is_steps

    if args.profile is not None and not is_steps(args.profile):
        args.command, args.args = args.profile, [args.command, *args.args]
        args.profile = DEFAULT_STEPS


def _launch_with_nan_check(options: LaunchOptions, profile: str | None) -> int:
    """The job with the NaN/inf sentinel armed in every rank, and what it found said at the end."""
    import tempfile

    from ascendify.compare.session import nan_sentinel, read_nan_check

    with tempfile.TemporaryDirectory(prefix="ascendify-nan-check-") as folder:
        saved = dict(os.environ)
        with nan_sentinel(Path(folder)) as env:
            os.environ.update(env)  # the ranks inherit the launcher's environment
            try:
                code = launch(options, profile=profile)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        found = read_nan_check(Path(folder))
    if found is not None:
        _say(f"first NaN/inf: {found.get('message', '')}")
    return code


def launch(options: LaunchOptions, dry_run: bool = False, profile: str | None = None) -> int:
    """Resolve, then print the plan or run the job (shared with ``ascendify.davincirun``);
    ``profile``: the steps every rank profiles into the log dir (``--profile``)."""
    from ascendify.launch import plan_to_json, preview, resolve_spec, run_job

    spec = resolve_spec(options)
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


def _emit(args: argparse.Namespace, command: tuple[str, ...]) -> int:
    import yaml

    from ascendify.launch.manifests import JobManifest, render

    if not args.image:
        raise AscendifyError("--emit needs --image (the container image to run)")
    nproc = args.nproc_per_node or "1"
    if not nproc.isdigit():
        raise AscendifyError(
            f"--emit needs a number for --nproc-per-node (cards per pod), not {nproc!r}"
        )
    job = JobManifest(
        name=args.name,
        image=args.image,
        nnodes=_nnodes(args.nnodes)[1] or 1,
        nproc_per_node=int(nproc),
        command=command,
        accelerator=args.accelerator,
    )
    print(yaml.safe_dump(render(args.emit, job), sort_keys=False), end="")
    return 0


def _say(message: str) -> None:
    """Tell the user; stderr may be a log on a disk that filled, and the exit code still tells."""
    for line in message.splitlines():
        with contextlib.suppress(OSError):
            print(f"ascendify run: {line}", file=sys.stderr, flush=True)


def _nnodes(value: str | None) -> tuple[int | None, int | None]:
    """``--nnodes N`` or torchrun's ``MIN:MAX``: (MIN, MAX), MIN None for a fixed count."""
    if value is None:
        return None, None
    low, colon, high = value.partition(":")
    try:
        least, most = int(low), int(high if colon else low)
    except ValueError:
        raise AscendifyError(f"--nnodes takes a whole number or MIN:MAX, got {value!r}") from None
    if colon and not 1 <= least <= most:
        raise AscendifyError(f"--nnodes {value}: MIN must be at least 1 and at most MAX")
    return (least if colon else None), most


def _nproc(value: str | None) -> str | None:
    if value is None or value == "auto" or (value.isdigit() and int(value) > 0):
        return value
    raise AscendifyError(f"--nproc-per-node takes a number of at least 1 or 'auto', got {value!r}")


def _ranks(value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None
    try:
        return tuple(int(item) for item in value.split(",") if item.strip())
    except ValueError:
        raise AscendifyError(f"--local-ranks-filter takes ranks like 0,1, got {value!r}") from None
