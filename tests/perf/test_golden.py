"""Golden inputs: public kineto traces, Ascend-format folders built from the documented columns,
and traces torch.profiler writes here. Every step's parts add up to the step within 1 %."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import torch
from torch import nn

from ascendify.perf import Analysis, analyse, to_json
from ascendify.perf.capture import StepProfiler
from ascendify.perf.kineto import COLLECTIVE, DEVICE_CATEGORIES

HTA = Path(__file__).parent / "data" / "hta"
PARTS = ("computing_ms", "communication_not_overlapped_ms", "free_ms", "preparing_ms")


def _add_up(analysis: Analysis) -> None:
    for rank in to_json(analysis)["ranks"]:
        assert rank["steps"]
        for step in rank["steps"]:
            assert sum(step[part] for part in PARTS) == pytest.approx(step["step_ms"], rel=0.01)
            assert min(step[part] for part in (*PARTS, "overlapped_ms")) >= -1e-9


# -- public kineto traces -------------------------------------------------------------------------


def _union(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def test_public_gpu_and_cpu_traces_are_split_and_add_up() -> None:
    analysis = analyse(str(HTA))
    _add_up(analysis)
    result = to_json(analysis)
    assert [rank["rank"] for rank in result["ranks"]] == [0, 1, 34]
    assert [s["step"] for s in result["ranks"][0]["steps"]] == [551, 552]
    assert result["ranks"][0]["timeline"] == "device kernels"
    assert result["ranks"][2]["timeline"].startswith("host thread")
    assert any("rank 34" in note and "out of step" in note for note in result["notes"])


@pytest.mark.parametrize("rank", [0, 1])
def test_gpu_computing_is_the_union_of_the_step_s_kernels(rank: int) -> None:
    with gzip.open(HTA / f"sampled_rank-{rank}.json.gz") as packed:
        events = json.load(packed)["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    kernels = [
        (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        for e in events
        if e.get("cat") in DEVICE_CATEGORIES and not COLLECTIVE.search(e["name"])
    ]
    analysis = analyse(str(HTA / f"sampled_rank-{rank}.json.gz"))
    for step, split in zip(
        sorted(steps, key=lambda e: e["ts"]), analysis.profiles[0].steps, strict=True
    ):
        start, end = step["ts"], step["ts"] + step["dur"]
        inside = [(max(a, start), min(b, end)) for a, b in kernels if b > start and a < end]
        assert split.computing_ms == pytest.approx(_union(inside) / 1000, rel=1e-9)
        assert split.step_ms == pytest.approx(step["dur"] / 1000)


# -- Ascend's formats -----------------------------------------------------------------------------

HEADER_9 = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive)"
# msprof-analyze's adapter test: Communication 30+20, Computing 100, Free 50, Not Overlapped 15,
# a receive of 5 -> these columns.
ROW = "100,15,35,50,50,160,5,10"


def _ascend(folder: Path, header: str, rows: list[str], rank: int | None = None) -> Path:
    output = folder / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    (output / "step_trace_time.csv").write_text("\n".join([header, *rows]) + "\n")
    if rank is not None:
        (folder / f"profiler_info_{rank}.json").write_text("{}")
    return folder


@pytest.mark.parametrize(
    ("header", "row"),
    [
        (HEADER_9, f"3,{ROW}"),
        (HEADER_9 + ",Preparing", f"3,{ROW},0"),
        ("Device_id," + HEADER_9 + ",Preparing", f"0,3,{ROW},0"),
    ],
)
def test_every_step_trace_header_gives_the_same_split(
    tmp_path: Path, header: str, row: str
) -> None:
    _ascend(tmp_path / "host_123_20260101_ascend_pt", header, [row], rank=2)
    analysis = analyse(str(tmp_path))
    _add_up(analysis)
    [rank] = to_json(analysis)["ranks"]
    assert rank["rank"] == 2
    assert rank["steps"] == [
        {"step": 3, "step_ms": 0.165, "computing_ms": 0.1, "communication_not_overlapped_ms": 0.015,
         "overlapped_ms": 0.035, "free_ms": 0.05, "preparing_ms": 0.0}
    ]  # fmt: skip
    assert analysis.notes == ()  # Stage + Bubble = Computing + Not Overlapped + Free


def test_a_preparing_that_is_a_time_stamp_is_left_out_and_said(tmp_path: Path) -> None:
    # rank 7's row of msprof-analyze's system test: Preparing holds an absolute time stamp.
    row = "0,14945901.57,50289541.49,14462809.01,64752350.51,377397.08,65612840.25,0.0,50289541.49,1726054679554437.8"
    _ascend(
        tmp_path / "dp0_pp0_tp0_dcp0_ep0_rank7_167032_20260527143703527_ascend_pt",
        HEADER_9 + ",Preparing",
        [row],
    )
    analysis = analyse(str(tmp_path))
    _add_up(analysis)
    [step] = analysis.profiles[0].steps
    assert analysis.profiles[0].rank == 7
    assert step.preparing_ms == 0.0
    assert step.step_ms == pytest.approx(65612840.25 / 1000, rel=1e-6)  # Stage, with no bubble
    assert any("time stamp" in note for note in analysis.notes)


def test_trace_view_with_string_time_stamps_is_split(tmp_path: Path) -> None:
    output = tmp_path / "rank1_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    output.mkdir(parents=True)
    events = [
        {
            "ph": "X",
            "name": "ProfilerStep#4",
            "ts": "1726054679554000.0",
            "dur": "1000",
            "pid": 1,
            "tid": 1,
        },
        {
            "ph": "X",
            "name": "Computing",
            "ts": "1726054679554100.0",
            "dur": "500",
            "pid": 2,
            "tid": 2,
        },
        {
            "ph": "X",
            "name": "Communication",
            "ts": "1726054679554500.0",
            "dur": "300",
            "pid": 2,
            "tid": 3,
        },
    ]
    (output / "trace_view.json").write_text(json.dumps(events))
    analysis = analyse(str(tmp_path))
    _add_up(analysis)
    [step] = analysis.profiles[0].steps
    assert (analysis.profiles[0].rank, step.step) == (1, 4)
    assert (step.preparing_ms, step.computing_ms) == (0.1, 0.5)
    assert step.overlapped_ms == pytest.approx(0.1)
    assert step.communication_not_overlapped_ms == pytest.approx(0.2)
    assert step.free_ms == pytest.approx(0.2)


def test_a_slow_link_of_the_communication_matrix_is_the_cause(tmp_path: Path) -> None:
    for rank in range(4):
        folder = _ascend(
            tmp_path / f"rank{rank}_ascend_pt", HEADER_9, [f"0,{ROW}", f"1,{ROW}"], rank=rank
        )
        peer = (rank + 1) % 4
        slow = rank == 2
        matrix = {"step": {"collective": {"allreduce@group": {f"{rank}-{peer}": {
            "Transport Type": "HCCS", "Transit Size(MB)": 100.0,
            "Transit Time(ms)": 20.0 if slow else 4.0, "Bandwidth(GB/s)": 5.0 if slow else 25.0,
        }}}}}  # fmt: skip
        (folder / "ASCEND_PROFILER_OUTPUT" / "communication_matrix.json").write_text(
            json.dumps(matrix)
        )
    result = to_json(analyse(str(tmp_path)))
    assert (result["slow_ranks"], result["cause"]) == ([2, 3], "communication")
    assert "2-3 HCCS" in result["verdict"]


def test_cluster_output_rows_per_rank_name_the_slow_one(tmp_path: Path) -> None:
    folder = tmp_path / "cluster_analysis_output"
    folder.mkdir()
    header = "Step,Type,Index," + HEADER_9.removeprefix("Step,") + ",DP Index,PP Index,TP Index"
    rows = []
    for step in range(3):
        for rank in range(8):
            computing, waiting = (400, 15) if rank == 5 else (100, 315)
            rows.append(
                f"{step},rank,{rank},{computing},{waiting},35,{waiting + 35},50,0,0,{waiting},{rank},0,0"
            )
        rows.append(f"{step},stage,0,400,315,35,350,50,0,0,315,0,0,0")
    (folder / "cluster_step_trace_time.csv").write_text("\n".join([header, *rows]) + "\n")
    analysis = analyse(str(folder))
    _add_up(analysis)
    result = to_json(analysis)
    assert len(result["ranks"]) == 8
    assert (result["slow_ranks"], result["cause"]) == ([5], "compute")


def test_an_ascend_folder_without_a_rank_is_a_problem_the_others_are_read(tmp_path: Path) -> None:
    _ascend(tmp_path / "a" / "host_1_ascend_pt", HEADER_9, [f"0,{ROW}"])
    _ascend(tmp_path / "b" / "host_2_ascend_pt", HEADER_9, [f"0,{ROW}"], rank=1)
    result = to_json(analyse(str(tmp_path)))
    assert [r["rank"] for r in result["ranks"]] == [1]
    assert "cannot tell its rank" in result["problems"][0]["message"]


# -- traces torch.profiler writes here ------------------------------------------------------------


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(16, 32)
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden: torch.Tensor = torch.relu(self.body(x))
        return self.head(hidden)  # type: ignore[no-any-return]


def test_the_step_profiler_records_the_steps_asked_and_leaves_no_module_hook(
    tmp_path: Path,
) -> None:
    from torch.nn.modules import module as module_hooks
    from torch.optim import optimizer as optimizer_hooks

    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    profiler = StepProfiler(first=1, last=2, folder=tmp_path, rank=3, attempt=0)
    hooks_before = len(optimizer_hooks._global_optimizer_post_hooks)
    profiler.arm()
    for _ in range(5):
        model(torch.randn(8, 16)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    assert profiler.done  # ended after step 2, not at the program's end
    assert len(optimizer_hooks._global_optimizer_post_hooks) == hooks_before + 1  # a flag check
    assert not module_hooks._global_forward_hooks
    assert not module_hooks._global_forward_pre_hooks
    [trace] = (tmp_path / "rank_3").iterdir()
    analysis = analyse(str(tmp_path))
    _add_up(analysis)
    [profile] = analysis.profiles
    assert (trace.name, profile.rank) == ("attempt_0.pt.trace.json", 3)  # from rank_3/
    assert [step.step for step in profile.steps] == [1, 2]
    assert profile.modules.calls == {"Net": 2, "Net.body": 2, "Net.head": 2}
