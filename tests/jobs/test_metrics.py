"""The metric parser on lines as common training code prints them, and the tail of rank logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendify.jobs.metrics import (
    MetricParser,
    MetricPatternError,
    Point,
    Series,
    append_points,
    attempt_parts,
    parse_lines,
    progress,
    read_points,
    read_series,
    rising,
    throughput_batch,
    user_rules,
)
from ascendify.jobs.tail import MetricsTail

# (what prints it, a line, {series: value}, the step found or None). Each framework's line is
# made by its own format string (the source it comes from is named), with made-up numbers.
FORMATS = [
    ("plain", "step 5 loss 1.25", {"loss": 1.25}, 5),
    ("colon", "loss: 0.5, lr: 0.001", {"loss": 0.5, "lr": 0.001}, None),
    ("equals", "step=7 loss=2.5e-01", {"loss": 0.25}, 7),
    ("table", "| step 3 | loss 1.75 | lr 3e-4 |", {"loss": 1.75, "lr": 3e-4}, 3),
    # pytorch/examples imagenet/main.py: ProgressMeter, prefix "Epoch: [{}]", epoch from 0
    (
        "ModelZoo (PyTorch ImageNet)",
        "[gpu id: 0] Epoch: [2][  10/5005]\tTime  0.123 ( 0.456)\tData  0.001 (0.002)\t"
        "Loss 6.9063e+00 (6.9121e+00)\tAcc@1   0.00 (  0.10)",
        {"loss": 6.9063, "acc": 0.0},
        2 * 5005 + 10,
    ),
    ("ModelZoo FPS", "[npu id: 0] * FPS@all 1568.329, TIME@all 0.245", {"fps": 1568.329}, None),
    ("ModelZoo (MindSpore)", "epoch: 1 step: 100, loss is 2.3012", {"loss": 2.3012}, 100),
    ("nanoGPT", "iter 10: loss 9.5521, time 36.71ms, mfu 1.23%", {"loss": 9.5521}, 10),
    (
        "nanoGPT eval",
        "step 250: train loss 1.9123, val loss 2.0456",
        {"loss": 1.9123, "val_loss": 2.0456},
        250,
    ),
    # transformers Trainer.log: print(output) of {**logs, "epoch": ...} (no step on the line)
    (
        "HF Trainer",
        "{'loss': 2.3456, 'grad_norm': 1.2345678, 'learning_rate': 4.5e-05, 'epoch': 0.5}",
        {"loss": 2.3456, "grad_norm": 1.2345678, "lr": 4.5e-05},
        None,
    ),
    # transformers 5 prints each float as a string of 4 significant digits (f"{v:.4g}")
    (
        "HF Trainer 5",
        "{'loss': '1.385', 'grad_norm': '0.244', 'learning_rate': '4.5e-05', 'epoch': '0.25'}",
        {"loss": 1.385, "grad_norm": 0.244, "lr": 4.5e-05},
        None,
    ),
    (
        "HF Trainer eval",
        "{'eval_loss': 0.4321, 'eval_accuracy': 0.8125, 'eval_runtime': 1.2, "
        "'eval_samples_per_second': 340.1, 'eval_steps_per_second': 42.5, 'epoch': 1.0}",
        {"eval_loss": 0.4321, "eval_acc": 0.8125},
        None,
    ),
    (
        "HF Trainer summary",
        "{'train_runtime': 12.3, 'train_samples_per_second': 45.6, "
        "'train_steps_per_second': 5.7, 'train_loss': 0.61, 'epoch': 1.0}",
        {"samples/s": 45.6, "it/s": 5.7, "loss": 0.61},
        None,
    ),
    # the Trainer's tqdm bar (a "\r" redraw: one line each)
    ("HF Trainer tqdm", " 42%|████▏     | 210/500 [01:02<01:26,  3.36it/s]", {"it/s": 3.36}, 210),
    ("tqdm slow", "  3%|▎         | 3/100 [00:07<03:52,  2.40s/it]", {"s/it": 2.4}, 3),
    # accelerate's examples: accelerator.print(f"epoch {epoch}:", eval_metric)
    ("accelerate", "epoch 2: {'accuracy': 0.8431, 'f1': 0.8893}", {"acc": 0.8431}, None),
    # transformers' run_clm_no_trainer.py (accelerate): logger.info(f"epoch {epoch}: perplexity: ...")
    (
        "accelerate (no_trainer)",
        "12/02/2026 07:00:00 - INFO - __main__ - epoch 0: perplexity: 35.21 eval_loss: 3.5613",
        {"ppl": 35.21, "eval_loss": 3.5613},
        None,
    ),
    # deepspeed/runtime/pipe/engine.py: f"steps: {..} loss: {..:0.4f} iter time (s): ... samples/sec:"
    (
        "DeepSpeed pipeline",
        "steps: 10 loss: 1.2000 iter time (s): 0.250 samples/sec: 128.000",
        {"loss": 1.2, "s/it": 0.25, "samples/s": 128.0},
        10,
    ),
    # deepspeed/runtime/engine.py _report_progress through log_dist
    (
        "DeepSpeed engine",
        "[2026-12-02 07:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] step=20, skipped=0, "
        "lr=[0.0001], mom=[(0.9, 0.999)]",
        {"lr": 0.0001},
        20,
    ),
    # deepspeed/utils/timer.py ThroughputTimer.stop
    (
        "DeepSpeed throughput",
        "[Rank 0] epoch=0/micro_step=40/global_step=10, RunningAvgSamplesPerSec=31.52, "
        "CurrSamplesPerSec=32.07, MemAllocated=1.2GB, MaxMemAllocated=2.3GB",
        {"samples/s": 31.52},
        10,
    ),
    # timm train.py: f"Train: {epoch} [{update_idx:>4d}/{updates_per_epoch} ({..:>3.0f}%)]  Loss: ..."
    (
        "timm",
        "Train: 1 [  50/1251 (  4%)]  Loss: 6.912 (6.93)  Time: 0.402s,  636.85/s  "
        "(0.410s,  624.40/s)  LR: 1.000e-06  Data: 0.012 (0.020)",
        {"loss": 6.912, "samples/s": 636.85, "lr": 1e-06},
        1251 + 50,
    ),
    # Lightning's TQDMProgressBar: "Epoch {current_epoch}", the bar counts the epoch's batches
    (
        "Lightning (tqdm)",
        "Epoch 2:  45%|████▌     | 45/100 [00:02<00:03, 17.85it/s, v_num=0, train_loss=0.234]",
        {"it/s": 17.85, "loss": 0.234},
        2 * 100 + 45,
    ),
    # mmengine LogProcessor: f"Epoch({mode}){cur_epoch_str}[{cur_iter_str}/{dataloader_len}]  "
    (
        "mmengine",
        "12/02 07:00:00 - mmengine - INFO - Epoch(train)  [3][ 50/1563]  base_lr: 1.0000e-01 "
        "lr: 1.0000e-01  eta: 0:30:12  time: 0.0532  data_time: 0.0021  memory: 1234  "
        "grad_norm: 3.2100  loss: 2.1016  loss_cls: 2.1016",
        {"lr": 0.1, "loss": 2.1016, "grad_norm": 3.21},
        2 * 1563 + 50,
    ),
    (
        "mmengine by iteration",
        "Iter(train) [  50/1000]  lr: 1.0000e-02  eta: 0:01:00  time: 0.05  loss: 0.9",
        {"lr": 0.01, "loss": 0.9},
        50,
    ),
    (
        "tqdm postfix",
        "100%|##########| 20/20 [00:01<00:00, 15.30it/s, loss=1.23, lr=0.01]",
        {"it/s": 15.3, "loss": 1.23, "lr": 0.01},
        20,
    ),
    ("tutorial", "Epoch [1/10], Step [100/600], Loss: 2.2146", {"loss": 2.2146}, 100),
    ("tensor print", "step 4 loss tensor(0.6931, device='npu:0')", {"loss": 0.6931}, 4),
    ("tokens", "iter 3 | 12345.6 tokens/s | loss 4.5", {"tokens/s": 12345.6, "loss": 4.5}, 3),
    # Megatron-LM training.py training_log: ' iteration {:8d}/{:8d} |' and one ' {}: {} |' a field
    (
        "Megatron",
        " [2026-12-02 07:00:00] iteration       30/    1000 | consumed samples:          960 | "
        "elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 101.2 | "
        "learning rate: 1.000000E-04 | global batch size:    32 | lm loss: 7.100000E+00 | "
        "loss scale: 1.0 | grad norm: 2.345 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |",
        # the step time and the global batch printed beside it give samples/s
        {"loss": 7.1, "s/it": 1.2345, "lr": 1e-4, "grad_norm": 2.345, "samples/s": 32 / 1.2345},
        30,
    ),
    # pytorch/examples word_language_model/main.py: '| epoch {:3d} | {:5d}/{:5d} batches | lr ...',
    # epochs from 1: epoch 3, batch 20 of 310 is step 2 * 310 + 20
    (
        "PyTorch examples (word_language_model)",
        "| epoch   3 |    20/  310 batches | lr 20.00 | ms/batch 991.72 | loss  8.88 | ppl  7183.24",
        {"lr": 20.0, "s/it": 0.99172, "loss": 8.88, "ppl": 7183.24},
        640,
    ),
]
# Lines that hold no metric, though they look close.
NOTHING = [
    "loss_scale: 65536",
    "dynamic loss scaling enabled",
    "base_lr: 0.1",
    "Saving checkpoint to step_100.pt",
    "lossless compression 12",
    "loss: nan",
    "  Gradient Accumulation steps = 4",  # the HF Trainer's banner: a step alone is no point
    "  Total optimization steps = 1,000",
    "Epoch(val) [1][ 50/313]    eta: 0:00:05  time: 0.0100",  # mmengine's validation: no metric
    "accelerate launch --num_processes 2 train.py",
]


@pytest.mark.parametrize(("tool", "line", "expected", "step"), FORMATS, ids=[f[0] for f in FORMATS])
def test_common_formats(tool: str, line: str, expected: dict[str, float], step: int | None) -> None:
    points = parse_lines(MetricParser(), 0, f"{line}\n".encode(), 1.0)
    assert {p.name: p.value for p in points} == pytest.approx(expected), tool
    assert {p.step for p in points} == {step}


@pytest.mark.parametrize("line", NOTHING)
def test_lookalikes_hold_nothing(line: str) -> None:
    assert parse_lines(MetricParser(), 0, f"{line}\n".encode(), 1.0) == []


def test_user_patterns_come_first_and_add_series() -> None:
    rules = user_rules({"acc": r"Acc@1\s+([\d.]+)", "loss": r"objective=(\S+)"})
    text = b"Acc@1  71.5 (70.1)\nstep 2 objective=0.75\n"
    points = parse_lines(MetricParser(rules), 3, text, 1.0)
    assert [(p.rank, p.name, p.step, p.value) for p in points] == [
        (3, "acc", None, 71.5),
        (3, "loss", 2, 0.75),
    ]


@pytest.mark.parametrize(
    ("patterns", "error"),
    [
        ({"acc": "Acc@1 ([0-9"}, "not a regular expression"),
        ({"1 bad": "x"}, "metric name"),
        ({"acc": "(?P<v>1)"}, "plain group"),
        ({"acc": r"(?<=acc=)[\d.]+"}, "RE2's syntax"),  # look-behind: not linear
        ({"acc": r"(\d)\1"}, "RE2's syntax"),  # back-reference
        ({"acc": "x?"}, "matches the empty string"),
        ({"acc": "$"}, "matches the empty string"),
        ({"acc": ".*"}, "matches the empty string"),
        ({"acc": "[0-9.]*"}, "matches the empty string"),
    ],
)
def test_bad_user_patterns_are_named(
    patterns: dict[str, str], error: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(MetricPatternError, match=error) as refused:
        user_rules(patterns)
    assert "b'" not in str(refused.value)
    assert capfd.readouterr().err == ""  # RE2 logs nothing of its own


def test_every_line_of_a_chunk_is_its_own() -> None:
    text = "".join(f"step {n} loss {1 / (n + 1):.4f}\n" for n in range(20))
    points = parse_lines(MetricParser(), 0, text.encode(), 1.0)
    assert [p.step for p in points] == list(range(20))
    assert points[19].value == pytest.approx(0.05)


def test_points_round_trip_and_group(tmp_path: Path) -> None:
    path = tmp_path / "metrics.tsv"
    written = [
        Point(0, "loss", 1, 2.0, 10.0),
        Point(1, "loss", 1, 2.5, 10.0),
        Point(0, "samples/s", None, 100.0, 11.0),
        Point(0, "loss", 2, 1.5, 12.0),
    ]
    append_points(path, written)
    assert read_points(path) == written
    grouped = read_series(path, name="loss")
    assert [(s.rank, s.steps, s.values) for s in grouped] == [
        (0, [1, 2], [2.0, 1.5]),
        (1, [1], [2.5]),
    ]
    assert progress(written) == progress(read_points(path))
    assert progress(written).step == 2
    assert progress(written).loss == 1.5
    assert progress(written).throughput == ("samples/s", 100.0)


def test_tail_reads_complete_lines_and_skips_tqdm_redraws(tmp_path: Path) -> None:
    log = tmp_path / "rank_0.log"
    out = tmp_path / "metrics.tsv"
    tail = MetricsTail([(0, log)], out, MetricParser())
    assert tail.poll() == 0  # no file yet
    with log.open("w") as handle:
        handle.write("step 1 loss 0.9\nstep 2 loss 0.")
        handle.flush()
        assert tail.poll() == 1  # the cut line waits
        handle.write("8\n 5/9 [00:01, loss=0.7]\r 5/9 [00:02, loss=0.7]\r 6/9 [00:02, loss=0.6]")
        handle.flush()
        assert tail.poll() == 2
    assert tail.poll(final=True) == 1
    assert [(p.step, p.value) for p in read_points(out)] == [(1, 0.9), (2, 0.8), (5, 0.7), (6, 0.6)]


def test_a_whole_match_gives_the_number_it_ends_with() -> None:
    """``acc=[0-9.]*`` (no group) reads 0.5 from ``acc=0.5``; a match holding no number, nothing."""
    rules = user_rules({"acc": "acc=[0-9.]*", "tag": "tag=[a-z]+"})
    points = parse_lines(MetricParser(rules), 0, b"acc=0.5 tag=x\nacc=\nlast acc=0.75", 1.0)
    assert [(p.name, p.value) for p in points] == [("acc", 0.5), ("acc", 0.75)]


@pytest.mark.parametrize(
    "text",
    [b"x=" + b"a" * 40, b"x=" + b"a" * 100_000 + b"\n" + b"x=ab", b"\n" * 1000 + b"x=aab"],
)
def test_user_patterns_run_in_linear_time(text: bytes) -> None:
    """``(a+)+b`` on a line of a's backtracks for ever in Python's re; RE2 ends at once."""
    parser = MetricParser(user_rules({"x": "x=((a+)+b)", "n": "(a+)+b"}))
    points = parse_lines(parser, 0, text, 1.0)
    assert [p.name for p in points] == []  # "ab" and "aab" are no numbers: nothing, but an end


def test_every_search_moves_forward() -> None:
    """A pattern can match an empty string inside a text (``\\b``) though not the empty text:
    each line is read once, the last one too, and the search ends."""
    rules = user_rules({"v": r"\b\d*"})
    points = parse_lines(MetricParser(rules), 0, b"5\n\n7 x\n8", 1.0)
    assert [p.value for p in points] == [5.0, 7.0, 8.0]


def test_a_key_and_many_blanks_take_linear_time() -> None:
    """A key and then blanks once took time squared in the blanks (minutes for 16,000)."""
    text = b"loss" + b" " * 200_000 + b"x\nloss 0.5\n"
    assert [p.value for p in parse_lines(MetricParser(), 0, text, 1.0)] == [0.5]


def test_tail_reads_all_a_rank_printed_however_much(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One poll reads every line, chunk after chunk (it once read one chunk a second)."""
    monkeypatch.setattr("ascendify.jobs.tail.CHUNK", 1024)
    log = tmp_path / "rank_0.log"
    log.write_text("".join(f"step {n} loss {n / 1000}\n" for n in range(2000)))
    out = tmp_path / "metrics.tsv"
    assert MetricsTail([(0, log)], out, MetricParser()).poll() == 2000
    assert [p.step for p in read_points(out)] == list(range(2000))


def test_tail_skips_a_too_long_line_and_reads_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("ascendify.jobs.tail.CHUNK", 64)
    log = tmp_path / "rank_0.log"
    log.write_text("step 1 loss 0.9\n" + "loss 5 " * 100 + "\nstep 2 loss 0.8\nstep 3 loss 0.7")
    out = tmp_path / "metrics.tsv"
    tail = MetricsTail([(0, log)], out, MetricParser())
    assert tail.poll() == 2
    assert "rank 0: a line longer than 64 bytes at byte 16 of rank_0.log is skipped" in (
        capsys.readouterr().out
    )
    assert tail.poll(final=True) == 1
    assert [(p.step, p.value) for p in read_points(out)] == [(1, 0.9), (2, 0.8), (3, 0.7)]


def test_a_tensorboard_tag_with_a_line_break_stays_one_field(tmp_path: Path) -> None:
    """A tag is the job's to name: a tab or newline in it once split the stored line and forged
    a console line of ``job metrics``."""
    pytest.importorskip("tensorboard", reason="the tensorboard extra reads event files")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util.tensor_util import make_tensor_proto

    writer = EventFileWriter(str(tmp_path))
    value = summary_pb2.Summary.Value(tag="loss\nrank 0\t", tensor=make_tensor_proto(0.5))
    writer.add_event(event_pb2.Event(step=3, summary=summary_pb2.Summary(value=[value])))
    writer.close()
    out = tmp_path / "metrics.tsv"
    assert MetricsTail([], out, MetricParser(), [tmp_path]).poll() == 1
    assert [(p.name, p.step, p.value) for p in read_points(out)] == [
        ("loss\\x0arank 0\\x09", 3, 0.5)
    ]


def test_a_downsampled_series_keeps_ends_and_extremes() -> None:
    values = [float(n % 10) for n in range(10_000)]
    values[5_003] = 99.0
    series = Series("loss", 0, list(range(10_000)), values, [1.0] * 10_000)
    shown = series.downsampled(100)
    assert len(shown.values) <= 100
    assert (shown.steps[0], shown.steps[-1]) == (0, 9_999)
    assert shown.steps == sorted(shown.steps)
    assert 5_003 in shown.steps
    assert (min(shown.values), max(shown.values)) == (0.0, 99.0)
    assert series.downsampled(10_000) is series
    assert series.to_json(times=False, limit=100)["count"] == 10_000


@pytest.mark.parametrize("stopped", [False, True])
def test_the_job_end_waits_for_a_reader_that_moves_on_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    stopped: bool,
) -> None:
    """A reader that reads nothing more (here: one held on an event) is left behind, sooner once
    a stop was asked for; the runner then records the job's end."""
    import threading

    from ascendify.jobs import runner

    monkeypatch.setattr(runner, "READER_STALL", 3600.0 if stopped else 0.5)
    monkeypatch.setattr(runner, "READER_CATCH_UP_STOPPED", 0.5)
    held = threading.Event()
    reader = threading.Thread(target=held.wait, daemon=True)
    reader.start()
    stop = threading.Event()
    if stopped:
        stop.set()
    tail = MetricsTail([(0, tmp_path / "rank_0.log")], tmp_path / "metrics.tsv", MetricParser())
    runner._wait_for_reader(reader, tail, stop)
    assert reader.is_alive()
    assert "the reader had not read every line" in capsys.readouterr().out
    held.set()
    reader.join()


def test_a_chunk_reads_as_its_lines_one_by_one() -> None:
    """Dense chunks (a hint on every line) are read whole, sparse ones line by line: both give
    what each line gives alone."""
    lines = [format_[1] for format_ in FORMATS] + NOTHING
    alone = [
        point
        for line in lines
        for point in parse_lines(MetricParser(), 0, f"{line}\n".encode(), 1.0)
    ]
    dense = "".join(f"{line}\n" for line in lines)
    sparse = "".join(f"{line}\n" + "a plain line\n" * 5 for line in lines)
    assert parse_lines(MetricParser(), 0, dense.encode(), 1.0) == alone
    assert parse_lines(MetricParser(), 0, sparse.encode(), 1.0) == alone


@pytest.mark.parametrize(
    ("hyper", "line", "samples_per_second"),
    [
        (
            {"batch_size": "20"},
            "| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 500.00 | "
            "loss  7.63 | ppl  2065.57",
            40.0,
        ),
        ({"batch-size": "64"}, "steps: 10 loss: 1.2000 iter time (s): 0.500", 128.0),
        ({"batch_size": "64"}, "steps: 10 loss: 1.2 iter time (s): 0.5 samples/sec: 99.0", 99.0),
        ({"lr": "0.1"}, "| epoch 1 | 20/ 310 batches | ms/batch 500.00 | loss 7.6", None),
        ({"batch_size": "auto"}, "| epoch 1 | 20/ 310 batches | ms/batch 500.00 | loss 7.6", None),
    ],
)
def test_a_step_time_is_a_throughput_where_the_batch_is_known(
    hyper: dict[str, str], line: str, samples_per_second: float | None
) -> None:
    """The job's batch size (a hyperparameter) over the printed step time; a printed throughput
    is kept as printed."""
    parser = MetricParser(batch=throughput_batch(hyper))
    found = {p.name: p.value for p in parse_lines(parser, 0, f"{line}\n".encode(), 1.0)}
    assert found.get("samples/s") == (
        None if samples_per_second is None else pytest.approx(samples_per_second)
    )


# pytorch/examples word_language_model/main.py prints a training line a log interval, a
# validation line at each epoch's end and a test line at the end of training.
WORD_LANGUAGE_MODEL = (
    b"| epoch   3 |    80/   84 batches | lr 20.00 | ms/batch 12.34 | loss  5.12 | ppl   167.30\n"
    b"-----------------------------------------------------------------------------------------\n"
    b"| end of epoch   3 | time: 12.3s | valid loss  5.01 | valid ppl   150.2\n"
    b"=========================================================================================\n"
    b"| End of training | test loss  4.98 | test ppl   145.6\n"
)


def test_validation_and_test_values_have_series_of_their_own() -> None:
    """Training values keep their names; a value printed under a phase (valid, test, eval, val,
    validation) goes to that phase's series, whatever the separator."""
    points = parse_lines(MetricParser(), 0, WORD_LANGUAGE_MODEL, 1.0)
    assert [(p.name, p.step) for p in points] == [
        ("lr", 248),
        ("s/it", 248),
        ("loss", 248),
        ("ppl", 248),
        ("valid_loss", None),
        ("valid_ppl", None),
        ("test_loss", None),
        ("test_ppl", None),
    ]
    assert [p.value for p in points] == pytest.approx(
        [20.0, 0.01234, 5.12, 167.3, 5.01, 150.2, 4.98, 145.6]
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("val_loss: 2.5 val_acc: 0.75", {"val_loss": 2.5, "val_acc": 0.75}),
        (
            "validation loss 3.5, validation perplexity 33.1",
            {"validation_loss": 3.5, "validation_ppl": 33.1},
        ),
        ("Test Accuracy: 0.91", {"test_acc": 0.91}),
        ("train/loss 1.5 val/loss 1.75", {"loss": 1.5, "val_loss": 1.75}),
        ("interval loss 0.5", {"loss": 0.5}),  # a word ending in a phase's name is not one
    ],
)
def test_a_phase_is_read_from_its_prefix(line: str, expected: dict[str, float]) -> None:
    points = parse_lines(MetricParser(), 0, f"{line}\n".encode(), 1.0)
    assert {p.name: p.value for p in points} == pytest.approx(expected)


def test_the_throughput_of_a_printed_step_time_is_steps_a_second() -> None:
    """word_language_model prints milliseconds a batch and no throughput: the progress shows
    the batches a second; a throughput printed as such is preferred."""
    points = parse_lines(MetricParser(), 0, WORD_LANGUAGE_MODEL, 1.0)
    assert progress(points).throughput == ("it/s", pytest.approx(1 / 0.01234))
    assert progress(points).loss == 5.12  # the training loss, not the test loss printed last
    printed = [*points, Point(0, "samples/s", 248, 1620.0, 1.0)]
    assert progress(printed).throughput == ("samples/s", 1620.0)


def test_a_series_is_cut_where_each_attempt_began() -> None:
    """A point is the attempt's that had begun when it was read; an attempt that printed
    nothing has no part."""
    times = [1.0, 1.5, 2.0, 3.0, 9.0, 9.5]
    assert attempt_parts(times, []) == [(0, 0, 6)]
    assert attempt_parts(times, [2.0]) == [(0, 0, 2), (1, 2, 6)]
    assert attempt_parts(times, [2.5, 4.0, 9.0]) == [(0, 0, 3), (1, 3, 4), (3, 4, 6)]
    assert attempt_parts([], [2.0]) == []


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([0, 1, 5], True),
        ([], True),
        ([0, 2, 2], False),  # two points at one step: not an axis
        ([3, 1], False),
        ([0, None, 2], False),  # a point without a printed step
    ],
)
def test_steps_are_an_axis_when_every_point_has_one_above_the_last(
    steps: list[int | None], expected: bool
) -> None:
    assert rising(steps) is expected


def test_a_resumed_attempts_steps_are_an_axis_of_their_own() -> None:
    """An attempt resumed from step 10's checkpoint prints steps 10.. again: each attempt's steps
    rise, so the chart is drawn on them; a series printing no step in one attempt is not."""
    resumed = Series("loss", 0, [*range(20), *range(10, 40)], [1.0] * 50, [1.0] * 20 + [3.0] * 30)
    shown = resumed.to_json(times=False, restarts=[2.0])
    assert shown["attempts"] == [[0, 0, 20], [1, 20, 50]]
    assert shown["printed_steps"] is True
    assert resumed.to_json(restarts=[])["printed_steps"] is False  # one attempt: steps go back
    partly = Series("loss", 0, [0, 1, None], [1.0] * 3, [1.0, 1.0, 3.0])
    assert partly.to_json(restarts=[2.0])["printed_steps"] is False
    assert "attempts" not in resumed.to_json()  # `job metrics --json` as before
