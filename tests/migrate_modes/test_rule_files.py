"""``--rules FILE``: the format, its validation messages, and a run through the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ascendify.cli import main
from ascendify.errors import AscendifyError
from ascendify.migrate._modes import ChangeArgument, RenameFunction, RenameModule
from ascendify.migrate.rulefile import load_rule_file
from tests.conftest import RunCli

TOML = """\
[[rename_function]]
old = "ops.cuda_sync"
new = "ops.npu_sync"

[[rename_module]]
old = "cuda_kernels"
new = "npu_kernels"

[[change_argument]]
function = "torch.load"
keyword = "map_location"
value = '"cpu"'
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is standard from Python 3.11")
def test_toml_rules_load_with_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "rules.toml", TOML)
    rules = load_rule_file(path)
    assert rules == (
        RenameFunction("ops.cuda_sync", "ops.npu_sync", f"{path}:2"),
        RenameModule("cuda_kernels", "npu_kernels", f"{path}:6"),
        ChangeArgument("torch.load", "map_location", None, '"cpu"', f"{path}:10"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"rename_function": [{"old": "a.b"}]}', "rename_function[1]: missing key(s): new"),
        (
            '{"rename_function": [{"old": "a.b", "new": "c d"}]}',
            ":1: rename_function[1]: new must be a dotted",
        ),
        ('{"rename_class": []}', "unknown rule kind 'rename_class'"),
        ('{"change_argument": [{"function": "f", "keyword": "k"}]}', "either value"),
        (
            '{"change_argument": [{"function": "f", "keyword": "k", "value": "1 +"}]}',
            "not a Python expression",
        ),
        ('{"change_argument": [{"function": "f", "value": "1"}]}', "keyword, its position"),
        (
            '{"change_argument": [{"function": "f", "position": -1, "remove": true}]}',
            "position must be",
        ),
        ('{"rename_module": [{"old": "a", "new": "b", "extra": 1}]}', "unknown key(s): extra"),
        ('{\n  "rename_module": [\n    {"old": "a",}\n  ]\n}', ":3: not valid JSON"),
        ("[1, 2]", "top level must be a table"),
        (
            '{"rename_function": [{"old": "mylib.class", "new": "mylib.klass"}]}',
            ":1: rename_function[1]: old 'mylib.class' holds the Python keyword 'class'",
        ),
        ('{"rename_module": [{"old": "a", "new": "lambda"}]}', "the Python keyword 'lambda'"),
        (
            '{"rules": {"FuncNameModifyRule": [{"old_name": "f", "new_name": "import"}]}}',
            "new_name 'import' holds the Python keyword",
        ),
        (
            '{"change_argument": [{"function": "f", "keyword": "for", "remove": true}]}',
            "keyword must be an argument name, not 'for'",
        ),
    ],
)
def test_bad_rule_files_are_explained(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "rules.json", text)
    with pytest.raises(AscendifyError) as raised:
        load_rule_file(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


SURPRISES = [
    (
        '{"rename_function": [{"old": "print", "new": "mylib.log"}]}',
        "the rule changes the builtin 'print', which every file may call",
    ),
    (
        '{"change_argument": [{"function": "builtins.open", "keyword": "mode", "value": "1"}]}',
        "the builtin 'open'",
    ),
    (
        '{"rename_function": [{"old": "ops.sync", "new": "a.sync"}, {"old": "ops.sync", "new": "b.sync"}]}',
        "'ops.sync' is renamed again (first at ",
    ),
]


@pytest.mark.parametrize(("text", "message"), SURPRISES)
def test_builtins_and_a_name_renamed_twice_need_the_flag(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, "rules.json", text)
    with pytest.raises(AscendifyError) as raised:
        load_rule_file(path)
    assert message in str(raised.value)
    assert str(raised.value).startswith(f"{path}:1: ")
    assert "--allow-builtin-rules" in str(raised.value)
    assert load_rule_file(path, allow_builtins=True)  # accepted when asked for


def test_a_builtin_rule_is_refused_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text("import torch\n\nprint(torch.cuda.is_available())\n")
    rules = write(tmp_path, "rules.json", SURPRISES[0][0])
    out = tmp_path / "out"
    argv = ["migrate", "-i", str(source), "-o", str(out), "-r", str(rules), "-j", "1"]
    assert main(argv) == 2
    assert SURPRISES[0][1] in capsys.readouterr().err
    assert not out.exists()
    assert main([*argv, "--allow-builtin-rules"]) == 0
    assert "mylib.log(" in (out / "project_msft" / "train.py").read_text()


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AscendifyError, match=r"\.json or \.toml"):
        load_rule_file(write(tmp_path, "rules.yaml", "{}"))
    with pytest.raises(AscendifyError, match="cannot read"):
        load_rule_file(tmp_path / "absent.json")


@pytest.mark.slow
def test_user_rules_run_before_the_built_ins(tmp_path: Path, run_cli: RunCli) -> None:
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text(
        "import torch\n\ntorch.cuda.synchronize()\nx = torch.ones(1).cuda()\n"
    )
    (source / "eval.py").write_text("import torch\n\ntorch.cuda.synchronize()\n")
    rules = write(
        tmp_path, "rules.json",
        '{"rename_function": [{"old": "torch.cuda.synchronize", "new": "mylib.barrier"}]}',
    )  # fmt: skip
    out = tmp_path / "out"
    # -j 2: the rules travel to the worker processes with the settings.
    done = run_cli(["migrate", "-i", str(source), "-o", str(out), "--rules", str(rules), "-j", "2"])
    assert done.returncode == 0, done.stderr
    assert "mylib.barrier()" in (out / "project_msft" / "eval.py").read_text()
    text = (out / "project_msft" / "train.py").read_text()
    assert "mylib.barrier()" in text  # the user's rename, not torch_npu.npu.synchronize
    assert "import mylib" in text
    assert ".npu()" in text  # the built-ins still ran


@pytest.mark.slow
def test_a_bad_rule_file_is_a_usage_error(tmp_path: Path, run_cli: RunCli) -> None:
    rules = write(tmp_path, "rules.json", '{"rename_function": [{"old": "x"}]}')
    done = run_cli(
        ["migrate", "-i", str(tmp_path), "-o", str(tmp_path / "out"), "--rules", str(rules)]
    )
    assert done.returncode == 2
    assert "missing key(s): new" in done.stderr


def test_msfmktransplt_habits_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-r FILE`` in msFmkTransplt's format, ``-sim``, ``-v`` of a PyTorch version and the
    ``transplant_result_file/`` layout work as they do there."""
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_text(
        "import torch\n\nops.cuda_sync()\nx = torch.linalg.inv(torch.eye(2))\n"
    )
    rules = write(
        tmp_path, "rule.json",
        '{"rules": {"FuncNameModifyRule": [{"old_name": "cuda_sync", "new_name": "npu_sync"}]}}',
    )  # fmt: skip
    out = tmp_path / "out"
    code = main(["migrate", "-i", str(source), "-o", str(out), "-j", "1", "-r", str(rules), "-sim",
                 "-v", "2.7.1", "--transplant-result-file"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    reports = out / "project_msft" / "transplant_result_file"
    assert sorted(path.name for path in reports.iterdir()) == [
        "ascendify_analysis", "change_list.csv", "msFmkTranspltlog.txt", "unsupported_op.csv",
        "unsupported_op.xlsx",
    ]  # fmt: skip
    assert "(torch_npu 2.6.0)" in (reports / "msFmkTranspltlog.txt").read_text()
    assert not (out / "project_msft" / "change_list.csv").exists()
    text = (out / "project_msft" / "train.py").read_text()
    assert "ops.npu_sync()" in text
    assert "ascend_function.linalg_inv(" in text  # -sim replaced the API the NPU cannot run
    with pytest.raises(SystemExit):
        main(["migrate", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "-r FILE, --rule FILE, --rules FILE" in usage
    assert "-sim, --similar, --replace-unsupported" in usage
    assert "(this was -r before -r became --rule)" in usage


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"rename_function": [{"old": "mylib.run", "new": "__builtins__.exec"}]}',
            ":1: rename_function[1]: new '__builtins__.exec' is not an importable name: "
            "'__builtins__' is a dunder name",
        ),
        (
            '{"rename_module": [{"old": "mylib", "new": "builtins"}]}',
            ":1: rename_module[1]: new 'builtins' is not an importable name: 'builtins'",
        ),
        (
            '{"rules": {"FuncNameModifyRule": [{"old_name": "a.f", "new_name": "__main__.g",'
            ' "replace_module": true}]}}',
            "FuncNameModifyRule[1]: new '__main__.g' is not an importable name",
        ),
    ],
)
def test_a_rename_to_a_dunder_or_the_builtins_module_is_refused_even_when_allowed(
    tmp_path: Path, text: str, message: str
) -> None:
    # `import __builtins__` was written, and the renamed call ran exec
    path = write(tmp_path, "rules.json", text)
    with pytest.raises(AscendifyError) as raised:
        load_rule_file(path, allow_builtins=True)
    assert str(raised.value).startswith(str(path))
    assert message in str(raised.value)


def test_a_rule_file_over_a_mebibyte_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    # 8 MB of rules took 150 MB and, under a memory limit, ended in MemoryError (exit 3)
    rules = [{"old": f"m{n}.f", "new": f"n{n}.g"} for n in range(60_000)]
    path = write(tmp_path, "rules.json", json.dumps({"rename_function": rules}))
    assert path.stat().st_size > 2**20
    with pytest.raises(AscendifyError, match=r"--rules .*rules\.json is larger than 1 MiB"):
        load_rule_file(path)
