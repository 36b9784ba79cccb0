"""msprobe's dump layout: written from records and read back as records (fast, no torch)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ascendify.compare.judge import judge
from ascendify.compare.msprobe import msprobe_operator, read_msprobe, write_msprobe
from ascendify.compare.records import API, Dump
from ascendify.errors import AscendifyError
from tests.compare.synthetic import CLEAN, changed, record, run


def _with_classes(records: list) -> list:  # type: ignore[type-arg]
    """The synthetic model's records as the recorder writes them: module calls know their class."""
    return [replace(r, module_class="Model" if r.path == "Model" else "Block") for r in records]


def _dump(records: list, world_size: int = 1) -> Dump:  # type: ignore[type-arg]
    header = {"world_size": world_size, "pid": 4242}
    return Dump(Path("."), {"ranks": {"0": header}}, tuple(records))


def test_operator_names_take_msprobes_prefixes() -> None:
    assert msprobe_operator("torch.nn.functional.gelu") == "Functional.gelu"
    assert msprobe_operator("torch.Tensor.add") == "Tensor.add"
    assert msprobe_operator("torch.softmax") == "Torch.softmax"


def test_records_written_in_msprobes_layout_read_back_as_the_same_module_calls(
    tmp_path: Path,
) -> None:
    records = _with_classes(run(CLEAN))
    softmax = record("blocks.1:torch.softmax", 7, 8, (1.0,), 0.5, kind=API)
    written = write_msprobe(_dump([*records, softmax]), tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "step0/proc4242/construct.json", "step0/proc4242/dump.json", "step0/proc4242/stack.json",
    ]  # fmt: skip
    document = json.loads((tmp_path / "step0/proc4242/dump.json").read_text())
    assert document["level"] == "mix"
    assert "Module.blocks.1.norm.Block.forward.0" in document["data"]
    assert "Model" not in "".join(document["data"])  # the model itself: msprobe leaves it out
    construct = json.loads((tmp_path / "step0/proc4242/construct.json").read_text())
    assert construct["Module.blocks.1.norm.Block.forward.0"] == "Module.blocks.1.Block.forward.0"
    assert construct["Torch.softmax.0.forward"] == "Module.blocks.1.Block.forward.0"
    back = read_msprobe(tmp_path)
    ours = {
        (r.path, r.call, r.outputs[0].mean)
        for r in records
        if r.kind == "fwd" and r.path != "Model"
    }
    assert {(r.path, r.call, r.outputs[0].mean) for r in back.records if r.kind == "fwd"} == ours
    assert [r.path for r in back.records if r.kind == API] == ["blocks.1:torch.softmax"]


def test_a_msprobe_dump_judged_against_records_names_the_first_divergence(tmp_path: Path) -> None:
    reference = _with_classes(run(CLEAN))
    perturbed = _with_classes(run(changed(n=4.4, m=5.5, b1=6.6, out=7.7, loss=0.6)))
    write_msprobe(_dump(perturbed, world_size=2), tmp_path)
    assert (tmp_path / "step0" / "rank0" / "dump.json").is_file()
    comparison = judge(reference, read_msprobe(tmp_path).records, "auto")
    assert comparison.first is not None
    assert comparison.first.record.path == "blocks.1.norm"


def test_a_folder_without_msprobes_files_or_with_damaged_ones_is_named(tmp_path: Path) -> None:
    with pytest.raises(AscendifyError, match=r"no dump\.json of msprobe"):
        read_msprobe(tmp_path)
    folder = tmp_path / "step0" / "rank0"
    folder.mkdir(parents=True)
    (folder / "dump.json").write_text('{"task": "statistics"}')
    with pytest.raises(AscendifyError, match="no 'data' object"):
        read_msprobe(tmp_path)
    (folder / "dump.json").write_text("[" * 100_000)
    with pytest.raises(AscendifyError, match="nested too deeply"):
        read_msprobe(tmp_path)


def _msprobe_folder(root: Path, calls: list[str], parents: dict[str, str | None]) -> Path:
    folder = root / "step0" / "rank0"
    folder.mkdir(parents=True)
    entry = {"input_args": [], "output": []}
    (folder / "dump.json").write_text(json.dumps({"data": dict.fromkeys(calls, entry)}))
    (folder / "construct.json").write_text(json.dumps(parents))
    return folder


@pytest.mark.parametrize(
    "parents",
    [
        {
            "Module.a.A.forward.0": "Module.b.B.forward.0",
            "Module.b.B.forward.0": "Module.a.A.forward.0",
        },
        {"Module.a.A.forward.0": "Module.a.A.forward.0"},  # a call named its own parent
    ],
)
def test_parent_links_that_form_a_cycle_are_named_not_followed_forever(
    tmp_path: Path, parents: dict[str, str]
) -> None:
    _msprobe_folder(tmp_path, ["Module.a.A.forward.0", "Module.b.B.forward.0"], parents)
    with pytest.raises(AscendifyError, match=r"construct\.json: the parent links of Module\.a"):
        read_msprobe(tmp_path)


def test_a_long_parent_chain_is_read_in_one_pass(tmp_path: Path) -> None:
    # 20,000 nested calls, the innermost ending first: each call starts just before its child
    calls = [f"Module.m{depth}.M.forward.0" for depth in reversed(range(20_000))]
    parents = {f"Module.m{d}.M.forward.0": f"Module.m{d - 1}.M.forward.0" for d in range(1, 20_000)}
    _msprobe_folder(tmp_path, calls, parents)
    starts = {r.path: r.start for r in read_msprobe(tmp_path).records}
    assert starts["m19999"] == 2  # the first to end: its start is its own
    assert starts["m0"] == 2 - 19_999
    assert sorted(starts, key=starts.__getitem__) == [f"m{d}" for d in range(20_000)]
