"""--profile STEPS: how steps are given, and how a job passes them to its launcher."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from ascendify.commands import job as job_command
from ascendify.commands import run as run_command
from ascendify.errors import AscendifyError
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.plan import agent_argv
from ascendify.jobs.spec import SpecError, resolve
from ascendify.perf.starthook import DEFAULT_STEPS, FOLDER, parse_steps, profile_environment


@pytest.mark.parametrize(("text", "steps"), [("5-8", (5, 8)), ("0-0", (0, 0)), (" 7 ", (7, 7))])
def test_steps_are_first_and_last_included(text: str, steps: tuple[int, int]) -> None:
    assert parse_steps(text) == steps


@pytest.mark.parametrize("text", ["8-5", "a-b", "-3", "1-2-3", ""])
def test_bad_steps_are_refused_in_one_line(text: str) -> None:
    with pytest.raises(AscendifyError, match="--profile"):
        parse_steps(text)


def test_the_hook_goes_first_on_the_path_and_the_inherited_path_stays(tmp_path: Path) -> None:
    env = profile_environment(tmp_path / "profile", "2-3", {"PYTHONPATH": "/theirs"})
    assert env["PYTHONPATH"].split(":")[0] == str(FOLDER)
    assert env["PYTHONPATH"].endswith(":/theirs")
    assert env["ASCENDIFY_PROFILE_STEPS"] == "2-3"


def _parsed(module: object, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)  # type: ignore[attr-defined]
    return parser.parse_args(argv)


def test_run_profile_without_steps_gives_the_command_back() -> None:
    args = _parsed(run_command, ["--profile", "python", "train.py", "--lr=1"])
    run_command._profile_steps_or_command(args)
    assert (args.profile, args.command, args.args) == (
        DEFAULT_STEPS,
        "python",
        ["train.py", "--lr=1"],
    )
    args = _parsed(run_command, ["--profile", "3-4", "python", "train.py"])
    run_command._profile_steps_or_command(args)
    assert (args.profile, args.command, args.args) == ("3-4", "python", ["train.py"])


def test_a_job_passes_its_steps_to_every_node_launcher(tmp_path: Path) -> None:
    (tmp_path / "rank.py").write_text("")
    spec = resolve({"code_dir": str(tmp_path), "boot_file": "rank.py", "profile": "2-3"})
    argv = agent_argv(
        spec, JobLayout(tmp_path / "j", "j"), node=0, addresses=("a",), master_port=1, python="py"
    )
    assert "--profile=2-3" in argv
    assert argv.index("--profile=2-3") < argv.index("--cwd")
    with pytest.raises(SpecError, match="profile: 3-2: the last step comes before"):
        resolve({"code_dir": str(tmp_path), "boot_file": "rank.py", "profile": "3-2"})


def test_job_submit_profile_before_the_spec_file_takes_the_default(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    job_command._spec_arguments(parser)
    args = parser.parse_args(["--profile", str(tmp_path / "job.toml")])
    job_command._profile_steps_or_spec(args)
    assert (args.profile, args.spec) == (DEFAULT_STEPS, tmp_path / "job.toml")


def test_start_hooks_on_one_path_each_run_the_next_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--profile, --nan-check and --hang-timeout each put a sitecustomize first on the path; each
    runs the one it hides. Searching the whole path instead of the entries after its own ran the
    first hook again, without end (a RecursionError in every rank)."""
    import sys

    ran: list[str] = []
    folders = [tmp_path / name for name in ("first", "second", "third")]
    for folder in folders:
        folder.mkdir()
        (folder / "sitecustomize.py").write_text(
            "from pathlib import Path\n"
            "import sys\n"
            "from ascendify._autostart import run_hidden_sitecustomize\n"
            f"sys.modules['tests.perf.test_capture_options'].RAN.append({folder.name!r})\n"
            "run_hidden_sitecustomize(Path(__file__).resolve().parent)\n"
        )
    monkeypatch.setattr(sys, "path", [str(folder) for folder in folders] + sys.path)
    monkeypatch.setattr(sys.modules[__name__], "RAN", ran, raising=False)
    from ascendify._autostart import run_hidden_sitecustomize

    run_hidden_sitecustomize(folders[0].resolve())
    assert ran == ["second", "third"]
