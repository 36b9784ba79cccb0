"""perf compare A B: step time per card, modules and operators by their gap, vendors' names matched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendify.cli import main
from ascendify.perf.compare import common_name, compare_runs, to_json
from tests.perf.synthetic import PlannedStep, write_kineto
from tests.perf.test_golden import HEADER_9, _ascend


@pytest.mark.parametrize(
    ("names", "common"),
    [
        (
            ("aten::mm", "aten::addmm", "aclnnMatmul", "MatMulV2", "ampere_sgemm_128x64_tn"),
            "matmul",
        ),
        (("aten::_softmax", "aclnnSoftmax", "SoftmaxV2"), "softmax"),
        (
            (
                "gloo:all_reduce",
                "hcom_allReduce__123_0_1",
                "ncclKernel_AllReduce_RING_LL_Sum_float",
            ),
            "allreduce",
        ),
        (("aten::linear",), "aten::linear"),  # contains a matmul: not counted twice
    ],
)
def test_vendors_names_meet_under_one_name(names: tuple[str, ...], common: str) -> None:
    assert {common_name(name) for name in names} == {common}


def test_a_gpu_trace_and_an_ascend_folder_compare_by_operator(tmp_path: Path) -> None:
    gpu = tmp_path / "gpu"
    for rank in range(2):  # aten::mm of the synthetic trace: half of each step's 2 ms computing
        write_kineto(gpu / f"rank_{rank}" / "t.json", rank, [PlannedStep(0, 2000, 1000)] * 2)
    npu = tmp_path / "npu"
    for rank in range(2):
        folder = _ascend(
            npu / f"rank{rank}_ascend_pt", HEADER_9, ["0,3000,1000,0,1000,0,4000,0,1000"] * 2, rank
        )
        kernels = ["Step Id,Name,Type,Duration(us)"] + [
            f"0,MatMul_{i},MatMulV2,1500" for i in range(2)
        ]
        (folder / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text(
            "\n".join(kernels) + "\n"
        )
    comparison = to_json(compare_runs(str(gpu), str(npu)))
    assert comparison["a"]["step_ms"] == pytest.approx(3.0)
    assert comparison["b"]["step_ms"] == pytest.approx(4.0)
    assert comparison["step_ratio"] == pytest.approx(4 / 3, rel=1e-3)
    matmul = next(row for row in comparison["operators"] if row["name"] == "matmul")
    # A: 1 ms per step and card; B: two 1.5 ms kernels per rank over its 2 steps
    assert (matmul["a_ms"], matmul["b_ms"], matmul["ratio"]) == (1.0, 1.5, 1.5)


def test_compare_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side, computing in (("a", 2000), ("b", 4000)):
        write_kineto(tmp_path / side / "rank_0" / "t.json", 0, [PlannedStep(0, computing, 100)] * 3)
    assert main(["perf", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["operators"][0]["name"] == "aten::linear"
    assert result["operators"][0]["ratio"] == 2.0
    assert main(["perf", "compare", str(tmp_path / "a")]) == 2
    assert main(["perf", "compare", str(tmp_path / "a"), str(tmp_path / "missing")]) == 2
    assert "compare takes two runs" in capsys.readouterr().err
