"""The multi-rank reader: rank order by time (stamps or the launcher's marks) or exit order, root
cause apart from its echoes, the folders users have (ModelArts downloads, plogs), out-of-memory
numbers, streaming across blocks, and the ``explain`` command's exit codes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ascendify import cli
from ascendify.explain import explain_paths, reader, timestamps
from ascendify.explain.analysis import cause_line, render, to_json
from ascendify.explain.oom import parse
from ascendify.explain.sources import Source

# vllm-project/vllm-ascend#3413 (EI0002) and Ascend/pytorch#66 (507035), with this test's times.
EI0002 = (
    "EI0002: [PID: 2969] 2025-10-11-15:{minute}:34.713.335 The wait execution of the Notify register "
    "times out. Reason: The Notify register has not received the Notify record from remote rank: "
    "[{peer}]. base information: [streamID:[109], taskID[38], taskType[Notify Wait], "
    "tag[AllReduce_group_name_1654NHRAllReduceComm_device]]\n"
)
VECTOR_CORE = (
    "[W1011 15:{minute}:11.184 compiler_depend.ts:122] Warning: NPU warning, error code is 507035"
    "[Error]: \n[Error]: The vector core execution is abnormal. \n"
)


def _ranks(folder: Path, logs: dict[int, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rank, text in logs.items():
        (folder / f"rank_{rank}.log").write_text(f"2025-10-11 14:00:00 step 1 rank {rank}\n" + text)
    return folder


def test_four_ranks_of_hccl_timeouts_name_the_first_rank(tmp_path: Path) -> None:
    minutes = {0: "39", 1: "38", 2: "31", 3: "40"}  # rank 2 timed out first
    verdict = explain_paths(
        [_ranks(tmp_path, {r: EI0002.format(minute=m, peer=5) for r, m in minutes.items()})]
    )
    assert verdict.all_echo
    assert verdict.root is not None
    assert verdict.root.who == 2
    assert [r.who for r in verdict.ranks] == [2, 1, 0, 3]
    assert "every rank timed out waiting; this one first" in (cause_line(verdict) or "")
    assert render(verdict).startswith("first rank to time out (no rank failed by itself): rank 2")


def test_the_rank_that_failed_is_the_cause_and_the_timeouts_its_echoes(tmp_path: Path) -> None:
    logs = {r: EI0002.format(minute="45", peer=1) for r in (0, 2, 3)}
    logs[1] = VECTOR_CORE.format(minute="15")
    verdict = explain_paths([_ranks(tmp_path, logs)])
    assert verdict.root is not None
    assert verdict.root.who == 1
    assert verdict.root.headline.signature.id == "ACL507035"
    assert not verdict.all_echo
    assert {r.who: r.headline.signature.id for r in verdict.echoes} == dict.fromkeys(
        (0, 2, 3), "HCCL-EI0002"
    )
    shown = render(verdict)
    assert "root cause: rank 1, first went wrong at 2025-10-11T15:15:11.184+00:00" in shown
    assert "consequences" in shown
    assert "rank 0 at 2025-10-11T15:45:34.713+00:00: HCCL-EI0002 (echo)" in shown


def test_without_time_stamps_the_launchers_marks_order_the_ranks(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text("hello\nRuntimeError: Connection closed by peer\n")
    (tmp_path / "rank_0.log.times").write_text("0 1000.0\n6 1000.9\n")
    (tmp_path / "rank_1.log").write_text("hello\nTimeoutError: nothing to read\n")
    (tmp_path / "rank_1.log.times").write_text("0 1000.0\n6 1000.4\n")
    verdict = explain_paths([tmp_path])
    assert [r.who for r in verdict.ranks] == [1, 0]
    assert verdict.root is not None
    assert verdict.root.first_time == 1000.4
    assert verdict.root.headline.exception == "TimeoutError"


def test_without_times_the_summarys_first_failed_rank_comes_first(tmp_path: Path) -> None:
    for rank in (0, 1, 2):
        (tmp_path / f"rank_{rank}.log").write_text("RuntimeError: timed out in all_reduce\n")
    summary = {
        "root_cause": {"rank": 2, "time": 5.0, "log_path": str(tmp_path / "rank_2.log")},
        "ranks": {
            "0": {"exit_code": 1, "signal": None, "stopped_by_launcher": True},
            "1": {"exit_code": None, "signal": "SIGKILL", "stopped_by_launcher": True},
            "2": {"exit_code": 1, "signal": None, "stopped_by_launcher": False},
        },
    }
    (tmp_path / "run_summary.json").write_text(json.dumps(summary))
    verdict = explain_paths([tmp_path])
    assert next(r.who for r in verdict.ranks) == 2
    assert verdict.root is not None
    assert verdict.root.who == 2
    assert all(f.signature.id != "SIGKILL" for r in verdict.ranks for f in r.findings)


def test_a_rank_killed_from_outside_is_named_by_its_signal(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text("step 1\n")
    summary = {
        "root_cause": {"rank": 0, "time": 7.0, "log_path": str(tmp_path / "rank_0.log")},
        "ranks": {"0": {"exit_code": None, "signal": "SIGKILL", "stopped_by_launcher": False}},
    }
    (tmp_path / "run_summary.json").write_text(json.dumps(summary))
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert verdict.root.headline.signature.id == "SIGKILL"
    assert verdict.root.signal == "SIGKILL"


def test_a_modelarts_log_download_names_the_cause(tmp_path: Path) -> None:
    # The per-rank files of a ModelArts job, as downloaded, and a node console repeating them.
    job = "modelarts-job-1a2b3c"
    oom = (
        "[rank3]: RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB "
        "total capacity; 49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; "
        "57.55 GiB reserved in total by PyTorch)\n"
    )
    for rank in range(4):
        text = "2025-08-04 10:00:00 step 10 loss 1.2\n"
        text += oom if rank == 3 else EI0002.format(minute="50", peer=3)
        (tmp_path / f"{job}-proc-rank-{rank}-device-{rank}.txt").write_text(text)
    (tmp_path / f"{job}-worker-0.log").write_text("[rank 3]: " + oom)
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert verdict.root.who == 3
    headline = verdict.root.headline
    assert headline.signature.id == "NPU-OOM"
    assert sum(len(r.findings) for r in verdict.ranks) == 4  # the console was not read twice
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in (cause_line(verdict) or "")


def test_a_plog_folder_names_the_cause(tmp_path: Path) -> None:
    # ~/ascend/log/debug/plog: no rank in the lines, the file names the process.
    plog = tmp_path / "log" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-36035_20250513022550123.log").write_text(
        "[INFO] HCCL(36035,python):2025-05-13-02:25:50.000.001 [op_base.cc:100] init start\n"
        "[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 "
        "[op_base.cc:974][36818][Init][CommRootInfoConfig]errNo[0x0000000005000002]"
        "HcclCommInitRootInfo failed.\n"
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert verdict.root.who == "plog-36035_20250513022550123.log"
    assert verdict.root.headline.signature.id == "HCCL-ROOTINFO"
    assert "hccl_test" in verdict.root.headline.signature.fix


def test_plogs_beside_the_rank_logs_belong_to_their_rank(tmp_path: Path) -> None:
    _ranks(tmp_path, {0: "step 2\n", 1: "step 2\n"})
    plog = tmp_path / "ascend" / "rank_1" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-77_1.log").write_text(
        "[ERROR] RUNTIME(77,python):2025-10-11-15:01:02.000.001 [api_c.cc:731] "
        "rtEventRecord:ErrCode=507035, desc=[vector core exception]\n"
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert verdict.root.who == 1
    assert verdict.root.headline.signature.id == "ACL507035"


@pytest.mark.parametrize(
    ("line", "numbers", "fragmented"),
    [
        (  # xingchensong/TouchNet#100
            "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total "
            "capacity; 49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 "
            "GiB reserved in total by PyTorch)",
            ("NPU", 5.03, 60.96, 49.47, 57.55, 1.32),
            True,
        ),
        (  # hiyouga/LlamaFactory#5491
            "RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total "
            "capacity; 59.57 GiB already allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 "
            "GiB reserved in total by PyTorch)",
            ("NPU", 386 / 1024, 60.97, 59.57, 60.06, 16.54 / 1024),
            False,  # 0.49 GiB reserved but unused on a 61 GiB card: full, not fragmented
        ),
        (  # murong-xu/CADS#4
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a "
            "total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, "
            "this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated "
            "by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.",
            ("CUDA", 22.78, 31.47, 9.08, 9.08 + 9.35, 12.73),
            False,
        ),
    ],
)
def test_out_of_memory_lines_become_numbers(
    line: str, numbers: tuple[object, ...], fragmented: bool
) -> None:
    found = parse(line)
    assert found is not None
    gib = 1 << 30
    device, requested, total, allocated, reserved, free = numbers
    assert found.device == device
    for value, expected in (
        (found.requested, requested), (found.total, total), (found.allocated, allocated),
        (found.reserved, reserved), (found.free, free),
    ):  # fmt: skip
        assert value is not None
        assert abs(value / gib - float(expected)) < 0.01
    assert found.fragmented is fragmented
    advice = found.advice()
    assert ("fragmentation" in advice) is fragmented
    setting = "PYTORCH_NPU_ALLOC_CONF" if device == "NPU" else "PYTORCH_CUDA_ALLOC_CONF"
    assert f"{setting}=expandable_segments:True" in advice


def test_findings_across_blocks_keep_their_line_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "BLOCK", 1000)
    lines = [f"2025-01-01 00:00:{n % 60:02d} step {n} loss 0.5" for n in range(3000)]
    lines[1234] = "RuntimeError: CUDA error: an illegal memory access was encountered"
    lines[2999] = "x" * 5000 + " ValueError: not a traceback line"  # longer than a block
    lines.append("KeyError: 'labels'")
    (tmp_path / "rank_0.log").write_text("\n".join(lines))  # no line end at the very end
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    found = {f.line_no: f.signature.id for f in verdict.root.findings}
    assert found == {1235: "CUDA-ILLEGAL-ADDRESS", 3001: "PY-EXCEPTION"}
    assert verdict.root.headline.line_no == 1235


def test_lines_of_a_combined_log_are_given_to_the_rank_they_name(tmp_path: Path) -> None:
    (tmp_path / "torchrun.out").write_text(
        "[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection "
        "closed by peer [127.0.0.1]:10895\n"
        "[rank1]: ZeroDivisionError: division by zero\n"
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert verdict.root.who == 1
    assert verdict.root.headline.exception == "ZeroDivisionError"
    assert [r.who for r in verdict.echoes] == [0]
    assert to_json(verdict)["consequences"][0]["headline"]["id"] == "GLOO-CLOSED"


def test_explain_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = tmp_path / "clean"
    _ranks(clean, {0: "step 2 loss 0.1\n"})
    assert cli.main(["explain", str(clean)]) == 0
    assert "no known failure found" in capsys.readouterr().out
    failed = tmp_path / "failed"
    _ranks(failed, {0: VECTOR_CORE.format(minute="10")})
    assert cli.main(["explain", "--json", str(failed)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["root"]["rank"] == 0
    assert document["root"]["headline"]["source"] == "https://github.com/Ascend/pytorch/issues/66"
    assert cli.main(["explain", str(tmp_path / "absent")]) == 2
    assert "absent: no such file or directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["explain", str(tmp_path / "empty")]) == 2
    assert "no log files found" in capsys.readouterr().err


def test_a_restarted_runs_earlier_attempt_is_left_out(tmp_path: Path) -> None:
    log = "ValueError: first attempt\n[ascendify] restart 1\nKeyError: 'second attempt'\n"
    (tmp_path / "rank_0.log").write_text(log)
    (tmp_path / "rank_0.log.times").write_text(f"0 100.0\n{log.index('[ascendify]')} 200.0\n")
    attempts = [{"attempt": 0, "start": 90.0}, {"attempt": 1, "start": 150.0}]
    (tmp_path / "run_summary.json").write_text(json.dumps({"attempts": attempts}))
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert [f.text for f in verdict.root.findings] == ["KeyError: 'second attempt'"]


def test_the_launchers_marks_are_fine_enough_to_order_ranks() -> None:
    from ascendify.launch import agent

    assert agent.MARK_INTERVAL <= 0.1  # marks fine enough to order ranks that fail together


def test_a_jobs_directory_is_read_through_its_logs(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text("{}")
    code = tmp_path / "code"
    code.mkdir()
    (code / "notes.txt").write_text("ValueError: an example in the user's notes\n")
    (code / "train.py").write_text("raise SystemExit('error code is 507035')\n")
    _ranks(tmp_path / "logs" / "worker-0", {0: "KeyError: 'labels'\n"})
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert [f.text for r in verdict.ranks for f in r.findings] == ["KeyError: 'labels'"]


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        ("[rank3]: RuntimeError: boom", 3),
        ("worker-1: [rank 5]: RuntimeError: boom", 5),
        ("[rank0]:[E1219 03:01:55.989449808 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught", 0),
        ("[E1219 03:01:55.989449808 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught", 2),
        ("[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call", 8),
        ("(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [x.py:522] RuntimeError: y", 1),
        ("[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:-1) ERR00100 PTA call", None),
        ("KeyError: (1, 2)", None),
    ],
)
def test_a_line_names_its_rank(line: str, rank: int | None) -> None:
    source = Source(Path("log.txt"), None, "log")
    who, rest = reader._who(source, line)
    assert who == (rank if rank is not None else "log.txt")
    assert "RuntimeError" not in line or rest.endswith(line[line.index("RuntimeError") :])


@pytest.mark.parametrize(
    ("line", "stamp"),
    [
        ("[rank0]:[W326 11:49:12.331714626 compiler_depend.ts:133] Warning: x", "03-26 11:49:12"),
        (
            "E0913 09:12:35.512000 140089 elastic/multiprocessing/api.py:826] failed",
            "09-13 09:12:35",
        ),
        ("[2025/03/26 11:48:53] ERROR boom", "03-26 11:48:53"),
    ],
)
def test_stamps_without_a_year_or_with_slashes_are_read(line: str, stamp: str) -> None:
    when = timestamps.line_time(line, 2025)
    assert when is not None
    assert time.strftime("%m-%d %H:%M:%S", time.gmtime(when)) == stamp


def test_a_request_larger_than_the_card_is_not_called_fragmentation() -> None:
    found = parse(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB. GPU 0 has a "
        "total capacity of 79.15 GiB of which 60.00 GiB is free. Of the allocated memory 9.08 GiB "
        "is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated."
    )
    assert found is not None
    assert not found.fragmented
    assert "larger than the whole card" in found.advice()
    assert "flash attention" in found.advice()


def test_a_full_card_this_process_barely_uses_is_held_elsewhere() -> None:
    # vllm-project/vllm-ascend#1653: 1 GiB reserved by PyTorch, 39 MiB free of 29.5 GiB
    found = parse(
        "RuntimeError: NPU out of memory. Tried to allocate 98.00 MiB (NPU 0; 29.50 GiB total "
        "capacity; 1010.15 MiB already allocated; 1010.15 MiB current active; 39.48 MiB free; "
        "1.02 GiB reserved in total by PyTorch)"
    )
    assert found is not None
    assert found.held_elsewhere is not None
    assert abs(found.held_elsewhere / (1 << 30) - 28.44) < 0.01
    advice = found.advice()
    assert "held outside this process's allocator" in advice
    assert "npu-smi info" in advice
    assert "previous CANN release" in advice
    assert "batch size" not in advice  # a smaller batch does not get another's memory back


def test_a_card_full_of_this_process_is_not_held_elsewhere() -> None:
    found = parse(  # hiyouga/LlamaFactory#5491: 60 of 61 GiB reserved here
        "RuntimeError: NPU out of memory. Tried to allocate 386.00 MiB (NPU 2; 60.97 GiB total "
        "capacity; 59.57 GiB already allocated; 59.57 GiB current active; 16.54 MiB free; 60.06 "
        "GiB reserved in total by PyTorch)"
    )
    assert found is not None
    assert found.held_elsewhere is None
    assert "the card is full" in found.advice()


def test_a_pattern_fills_the_fix_with_what_the_line_says(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(
        "Traceback (most recent call last):\n"
        "ImportError: cannot import name 'AsyncEngineArgs' from 'vllm' (unknown location)\n"
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    headline = verdict.root.headline
    assert headline.signature.id == "PY-IMPORT-NAME"
    assert "pip uninstall vllm" in headline.fix
    assert "{module}" not in to_json(verdict)["root"]["headline"]["fix"]


def test_ranks_that_only_waited_name_the_rank_that_never_came(tmp_path: Path) -> None:
    for rank in (5, 6):
        (tmp_path / f"rank_{rank}.log").write_text(
            f"RuntimeError: [{rank}] is setting up NCCL communicator and retrieving ncclUniqueId "
            "from [0] via c10d key-value store by key '0', but store->get('0') got error: "
            "Socket Timeout\n"
        )
    verdict = explain_paths([tmp_path])
    assert verdict.all_echo
    assert verdict.awaited == 0
    assert "waiting for rank 0" in (cause_line(verdict) or "")
    assert "waited for: rank 0" in render(verdict)


def test_a_log_whose_tagged_lines_name_one_rank_is_that_ranks_log(tmp_path: Path) -> None:
    (tmp_path / "console.log").write_text(
        "RuntimeError: npuSynchronizeDevice: NPU function error: aclrtSynchronizeDevice, error "
        "code is 507046\n"
        "[ERROR] 2024-09-26-16:06:40 (PID:26, Device:2, RankID:2) ERR00100 PTA call acl api failed\n"
    )
    verdict = explain_paths([tmp_path])
    assert [report.who for report in verdict.ranks] == [2]
    assert verdict.all_echo  # the synchronize timed out waiting: rank 2 is not blamed


def test_the_detail_under_a_code_is_the_headline_and_a_wrapper_never_is(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(
        "RuntimeError: call aclnnMoeDistributeDispatchV3 failed, error code is 561002\n"
        "EZ9999[PID: 17833] 2025-12-23-07:36:19.237.396 (EZ9999):  HCCL_BUFFSIZE is too SMALL, "
        "maxBs = 512\n"
    )
    (tmp_path / "rank_1.log").write_text(
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.\n"
        "RuntimeError: Engine process failed to start\n"
    )
    verdict = explain_paths([tmp_path])
    headlines = {report.who: report.headline.signature.id for report in verdict.ranks}
    assert headlines == {0: "HCCL-BUFFSIZE", 1: "BF16-UNSUPPORTED"}


def test_an_exception_that_advises_gives_its_advice_as_the_fix(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(
        "ValueError: Please launch distributed training with `llamafactory-cli` or `torchrun`.\n"
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert "the exception itself says: Please launch" in verdict.root.headline.fix


def _root_fix(folder: Path, text: str) -> str:
    folder.mkdir()
    (folder / "rank_0.log").write_text(text)
    verdict = explain_paths([folder])
    assert verdict.root is not None
    return verdict.root.headline.fix


def test_a_wrapped_exception_message_gives_the_advice_on_its_next_lines(tmp_path: Path) -> None:
    # vllm-project/vllm-ascend#14628: the message wraps at the terminal's width, mid-sentence
    wrapped = (
        "ValueError: Free memory on device (8.0/64.0 GiB) on startup is less than desired\n"
        "GPU memory utilization (0.9, 57.6 GiB). Decrease GPU memory utilization or\n"
        "reduce GPU memory used by other processes.\n"
        "Loading weights took 3 s\n"
    )
    fix = _root_fix(tmp_path / "wrapped", wrapped)
    assert "Decrease GPU memory utilization or reduce GPU memory used by other processes." in fix
    assert "Loading weights" not in fix  # the message ended with its sentence
    # torchrun's tee puts the rank's prefix before each line of the message
    prefixed = "".join(f"[rank1]: {line}\n" for line in wrapped.splitlines())
    fix = _root_fix(tmp_path / "prefixed", prefixed)
    assert "Decrease GPU memory utilization or reduce GPU memory used by other processes." in fix
    other = _root_fix(tmp_path / "other", wrapped.replace("GPU memory utilization (", "[rank2]: ("))
    assert "Decrease" not in other  # another rank's line is not this message's
    # a message that ends its sentence takes nothing from the next line, nor does one followed
    # by a traceback's frame, a log record or another exception
    for after in (
        "Decrease the batch size\n",
        '  File "train.py", line 3, in <module>\n',
        "INFO 09-10 03:36:31 Decrease nothing\n",
        "RuntimeError: Decrease it\n",
    ):
        ended = _root_fix(
            tmp_path / f"ended{len(after)}",
            "ValueError: the checkpoint has no weights.\n" + after,
        )
        assert "Decrease" not in ended, after
    cut = _root_fix(
        tmp_path / "cut", "ValueError: the checkpoint has no weights for\nRuntimeError: Decrease\n"
    )
    assert "Decrease" not in cut  # another exception never continues a message, cut or not


def test_a_bare_assertion_error_names_the_assert_above_it(tmp_path: Path) -> None:
    # modelscope/ms-swift#6011, as vLLM's worker printed it
    prefix = "(Worker_TP2 pid=3549) ERROR 09-26 15:11:03 [multiproc_executor.py:654] "
    fix = _root_fix(
        tmp_path / "bare",
        f'{prefix}  File "/x/pyhccl.py", line 90, in __init__\n'
        f"{prefix}    assert isinstance(device, torch.device)\n"
        f"{prefix}AssertionError\n",
    )
    assert fix.endswith("the check that failed: assert isinstance(device, torch.device)")
    # an AssertionError with its own message, or an assert too far above, names no check
    told = _root_fix(tmp_path / "told", "    assert n > 0\nAssertionError: n must be positive\n")
    assert "check that failed" not in told
    far = _root_fix(tmp_path / "far", "    assert n > 0\nfirst\nsecond\nthird\nAssertionError\n")
    assert "check that failed" not in far
    not_indented = _root_fix(tmp_path / "prose", "we assert nothing\nAssertionError\n")
    assert "check that failed" not in not_indented


def test_an_exception_saying_what_the_call_lacked_gives_that_as_the_fix(tmp_path: Path) -> None:
    # huggingface/trl#434
    fix = _root_fix(
        tmp_path / "lacked",
        "ValueError: You passed `packing=False` to the SFTTrainer, but you didn't pass a "
        "`dataset_text_field` or `formatting_func` argument.\n",
    )
    assert "the exception itself says: You passed `packing=False`" in fix
    assert "dataset_text_field" in fix
    plain = _root_fix(tmp_path / "plain", "ValueError: you passed a list of 3 tensors\n")
    assert "the exception itself says" not in plain


def test_of_two_lines_of_one_entry_the_one_that_says_why_is_the_headline(tmp_path: Path) -> None:
    # hw-native-sys/PTOAS#721: the device names the fault, then says what it was two lines below
    fault = (
        "[ERROR] aclrtSynchronizeStream(stream) failed: 507014 (main.cpp:84)\n"
        "EZ9999[PID: 3577609] (EZ9999):  The error from device(chipId:2, dieId:1), serial number "
        "is 409, there is an exception of aicore error, core id is 18\n"
        "        TraceBack (most recent call last):\n"
        "       The extend info: errcode:(0, 0, 0) errorStr: timeout or trap error. fsmId:1\n"
    )
    (tmp_path / "rank_0.log").write_text(fault)
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    assert "errorStr: timeout or trap error" in verdict.root.headline.text
    assert dict(verdict.root.headline.fields)["why"] == "timeout or trap error"
    assert verdict.root.wrapper is not None
    assert "507014" in verdict.root.wrapper.text
    # too far below (more lines than a fault report has) it is another fault's line
    far = tmp_path / "far"
    far.mkdir()
    filler = "".join(f"        frame {n}\n" for n in range(20))
    (far / "rank_0.log").write_text(
        fault.replace("        TraceBack", filler + "        TraceBack")
    )
    verdict = explain_paths([far])
    assert verdict.root is not None
    assert "there is an exception of aicore error" in verdict.root.headline.text


def test_a_detail_says_which_line_it_came_out_from_under(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(
        "RuntimeError: call aclnnMoeDistributeDispatchV3 failed, error code is 561002\n"
        "[ERROR] 2025-12-23-07:36:19 (PID:17833, Device:0, RankID:-1) ERR00100 PTA call acl api "
        "failed.\n"
        "EZ9999[PID: 17833] 2025-12-23-07:36:19.237.396 (EZ9999):  HCCL_BUFFSIZE is too SMALL\n"
    )
    verdict = explain_paths([tmp_path])
    shown = render(verdict)
    assert "  under: [ERROR] 2025-12-23-07:36:19 (PID:17833" in shown
    assert to_json(verdict)["root"]["under"]["id"] == "ERR00100"
