"""Numeric series read from what the ranks print (loss, lr, throughput, per step). Data + small
functions; no change to the training code.

Each :class:`MetricRule` names a series and the ways it is printed: ``KEY SEP VALUE`` with the
separators training code uses (``loss: 1.2``, ``loss=1.2``, ``Loss 1.2``, ``| loss 1.2 |``,
``'loss': 1.2``, ``loss is 1.2``) and, for rates, ``VALUE UNIT`` (tqdm's ``15.3it/s``). A step or
iteration number on the same line (``step 5``, ``iter 10:``, tqdm's ``45/100 [``) is the point's
step; where a framework prints the epoch and the batch in it (:data:`STEP_FORMS`), the step is made
global across epochs. All rules are one regular expression, run on the bytes of the lines that hint
at a metric.
Users add rules as ``NAME=REGEX`` (``--metric``, spec field ``metrics``), run by RE2 in linear
time: the regex's first group (else the number the match ends with) is the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import re2  # type: ignore[import-untyped]

from ascendify.jobs.layout import JobLayout

if TYPE_CHECKING:
    from ascendify.jobs.store import JobRecord, JobStore


@dataclass(frozen=True)
class MetricRule:
    code: str  # stable, for docs and messages
    name: str  # the series it feeds
    keys: str  # regex: the names the value is printed under ("KEY: VALUE")
    units: str = ""  # regex: units printed after the value ("VALUE UNIT"); rates only
    message: str = ""
    scale: float = 1.0  # the stored value is the printed one times this (milliseconds -> s)
    # Also printed for evaluation (``valid loss``, ``test ppl``, ``eval_accuracy``): such a value
    # goes to a series of its own, named by the phase printed (``valid_loss``; see PHASES).
    phased: bool = False


# What a program prints before a value of evaluation rather than training: the value's series is
# "<phase>_<name>" as printed ("valid loss" -> valid_loss, "test ppl" -> test_ppl).
PHASES = r"eval|val|valid|validation|test"
RULES: tuple[MetricRule, ...] = (
    MetricRule(
        "MT001", "loss", r"(?:train[_/ ]?)?loss|total_loss", message="training loss", phased=True
    ),
    MetricRule("MT003", "lr", r"lr|learning[_ ]rate", message="learning rate"),
    MetricRule("MT004", "fps", r"fps(?:@all)?", r"fps", message="frames (samples) per second"),
    MetricRule(
        "MT005",
        "samples/s",
        r"(?:train_)?samples_per_second|(?:samples?|imgs?|images)/s(?:ec)?",
        r"(?:samples?|imgs?|images)/s(?:ec)?|/s",  # timm prints "636.85/s"
        message="samples per second",
    ),
    MetricRule(
        "MT006",
        "tokens/s",
        r"(?:train_)?tokens_per_second|tokens?/s(?:ec)?|tok/s",
        r"tokens?/s(?:ec)?|tok/s",
        message="tokens per second",
    ),
    MetricRule(
        "MT007", "it/s", r"(?:train_)?steps_per_second|it/s", r"it/s", message="iterations/s"
    ),
    MetricRule(
        "MT008",
        "s/it",
        r"iter time \(s\)|(?:elapsed )?time per iteration \(s\)",  # DeepSpeed's pipeline engine
        r"s/it",  # tqdm, when an iteration takes more than a second
        message="seconds per step",
    ),
    MetricRule(
        "MT009",
        "s/it",
        r"ms/batch|ms/step|ms/it|(?:elapsed )?time per iteration \(ms\)",  # PyTorch examples, Megatron
        message="seconds per step, printed in milliseconds",
        scale=0.001,
    ),
    MetricRule("MT010", "grad_norm", r"grad[_ ]norm", message="gradient norm"),
    MetricRule("MT011", "ppl", r"ppl|perplexity", message="perplexity", phased=True),
    MetricRule("MT012", "acc", r"acc(?:uracy)?(?:@1)?", message="accuracy", phased=True),
    MetricRule(
        "MT013",
        "samples/s",
        r"(?:runningavg|curr)samplespersec",  # DeepSpeed's throughput timer
        message="samples per second",
    ),
    # Not a series: the batch a line's step time is for (Megatron prints it beside the time).
    MetricRule("MT014", "batch", r"global batch size", message="samples a step"),
)
BATCH = "batch"
STEP_TIME = "s/it"  # the series of the seconds a step takes
# A job's hyperparameters that give the samples each rank's step takes (see throughput_batch).
BATCH_HYPERPARAMETERS = (
    "batch_size",
    "batch-size",
    "per_device_train_batch_size",
    "micro_batch_size",
)
STEP = "step"
# A step or iteration number: "step 5", "Step [10/600]", "iter 10:", "global_step=7", DeepSpeed's
# "steps: 10"; tqdm's "45/100 [".
_STEP_KEYS = r"global_step|steps|step|iteration|iter"


@dataclass(frozen=True)
class StepForm:
    """A framework's way of printing where a line is in training: the batch (``batch``), and the
    epoch (``epoch``) with the batches an epoch has (``total``) where it prints them; the step is
    then ``(epoch - first_epoch) * total + batch``, global across epochs."""

    code: str
    tool: str
    pattern: str  # regex on the lowercased line, groups batch and (both or neither) epoch, total
    first_epoch: int = 0  # the number the tool prints for the first epoch


STEP_FORMS: tuple[StepForm, ...] = (
    StepForm(
        "ST001",
        "PyTorch examples (word_language_model): | epoch   3 |    20/  310 batches |",
        r"\| epoch +(?P<epoch>\d+) \| +(?P<batch>\d+)/ *(?P<total>\d+) batches",
        first_epoch=1,
    ),
    StepForm(
        "ST002",
        "PyTorch examples (imagenet), ModelZoo: Epoch: [0][  10/5005]",
        r"epoch: \[(?P<epoch>\d+)\]\[ *(?P<batch>\d+)/(?P<total>\d+)\]",
    ),
    StepForm(
        "ST003",
        "timm: Train: 0 [  50/1251 (  4%)]",
        r"train: (?P<epoch>\d+) \[ *(?P<batch>\d+)/(?P<total>\d+) \(",
    ),
    StepForm(
        "ST004",
        "mmengine: Epoch(train)  [1][ 50/1563]",
        r"epoch\(train\) *\[(?P<epoch>\d+)\]\[ *(?P<batch>\d+)/(?P<total>\d+)\]",
        first_epoch=1,
    ),
    StepForm(
        "ST005",
        "mmengine by iteration: Iter(train) [ 50/1000]",
        r"iter\(train\) *\[ *(?P<batch>\d+)/",
    ),
    StepForm(
        "ST006",
        "Lightning's bar: Epoch 0:  45%|####5     | 45/100 [",
        r"epoch (?P<epoch>\d+): +\d+%\|[^|\r\n]*\| *(?P<batch>\d+)/(?P<total>\d+) \[",
    ),
    StepForm(
        "ST007",
        "DeepSpeed's throughput timer: epoch=0/micro_step=40/global_step=10",
        r"epoch=\d+/micro_step=\d+/global_step=(?P<batch>\d+)",
    ),
)
# A phase's value: "valid loss", "test_ppl", "eval_accuracy" (tried before the training keys).
_PHASED_KEYS = (
    rf"(?P<phase>{PHASES})[_/ ]?(?P<of>{'|'.join(rule.keys for rule in RULES if rule.phased)})"
)
_STEP_FORMS = tuple((form, re.compile(form.pattern.encode())) for form in STEP_FORMS)
_TQDM_STEP = r"(?<![\w.])(?P<step>\d+)/\d+ \["
_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
# After the key: an optional closing quote, then ":", "=", "is" or blanks, an optional "[",
# "tensor(" (print(loss) of a tensor) or opening quote (transformers 5's Trainer prints its log
# values as strings: {'loss': '1.385'}). Blanks, not line breaks: a match stays on its line. Each
# run of blanks has one reading: "loss" and a million blanks cost a million steps, not a million
# squared.
_SEPARATOR = r"""['"]?[^\S\r\n]*(?:(?:[:=]|\bis\b)[^\S\r\n]*)?(?:\[[^\S\r\n]*|tensor\(|['"])?"""
LINE_BREAKS = re.compile(rb"[\r\n]")  # tqdm redraws its bar after "\r"
# Every line a rule reads holds one of these (lowercased); the rules run on those lines alone.
_HINTS = re.compile(rb"loss|lr|learning|fps|/s|per_?sec|tok|s/it|ms/|acc|ppl|perplexity")
_TRAILING_NUMBER = re.compile(_NUMBER.encode() + rb"\Z")


class MetricPatternError(ValueError):
    """A user's ``NAME=REGEX`` that cannot be used; the message says which and why."""


class Point(NamedTuple):
    rank: int
    name: str
    step: int | None
    value: float
    time: float


def user_rules(patterns: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Check ``{NAME: REGEX}`` from ``--metric``/the spec; returns them as (name, regex) pairs.

    The patterns run in RE2, whose time is linear in the text: no pattern (``x=(a+)+b``) can
    keep the reader on one line. RE2 has no look-around or back-references; such a pattern is
    refused here, as is one that matches the empty string (it would find a value on every line).
    """
    checked = []
    for name, pattern in patterns.items():
        if not re.fullmatch(r"[A-Za-z_][\w./-]{0,63}", name):
            raise MetricPatternError(f"{name!r}: a metric name is letters, digits, _ . / -")
        compiled = _user_pattern(name, pattern)
        if compiled.groupindex:
            raise MetricPatternError(f"{name}: use a plain group (...) for the value, not (?P<>)")
        if compiled.search(b"") is not None:
            raise MetricPatternError(
                f"{name}: {pattern!r} matches the empty string, so it would read every line: "
                "make it need the value, e.g. acc=([0-9.]+)"
            )
        checked.append((name, pattern))
    return tuple(checked)


def _user_pattern(name: str, pattern: str) -> Any:
    """``pattern`` compiled by RE2 (linear time); bytes are matched as UTF-8."""
    options = re2.Options()
    options.log_errors = False  # the error is ours to tell, in one line
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        why = error.args[0] if error.args else error
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else why
        message = (
            f"{name}: {pattern!r} is not a regular expression in RE2's syntax (linear time: no "
            f"look-around, no back-references): {why}"
        )
        raise MetricPatternError(message) from None


class MetricParser:
    """The rules as one expression, run only on the lines that hold a hint of a metric.

    One search of the chunk (lowercased, so no rule needs case-insensitive matching, which costs
    seven times more) finds the lines holding any of :data:`_HINTS`; the full expression runs
    on those alone; a chunk with hints on (nearly) every line is read whole, in one ``findall``.
    A user's patterns run on the original bytes, before the rules: where both read a series from
    a line, the user's value wins. Every search starts past the line it last found, so the reader
    always moves forward.
    """

    def __init__(self, user: Iterable[tuple[str, str]] = (), batch: int | None = None) -> None:
        self._user = [(name, _user_pattern(name, pattern)) for name, pattern in user]
        self.batch = batch  # samples a step (see throughput_batch): turns s/it into samples/s
        # Three alternatives, not one per rule: each costs a try at every character of a line.
        # The key or unit matched says which series it is (see _name).
        keys = "|".join([_STEP_KEYS, _unnamed(_PHASED_KEYS), *(rule.keys for rule in RULES)])
        units = "|".join(rule.units for rule in RULES if rule.units)
        # The step forms as one group, their own groups unnamed: the form is found again in the
        # text matched (see _form_step), once a line at most.
        forms = "|".join(_unnamed(form.pattern) for form in STEP_FORMS)
        self._pattern = re.compile(
            (
                rf"(?P<form>{forms})"
                rf"|(?<![\w/.])['\"]?(?P<key>{keys})(?![\w/]){_SEPARATOR}(?P<value>{_NUMBER})"
                rf"|(?<![\w.])(?P<rate>{_NUMBER}) ?(?P<unit>{units})(?![\w/])"
                rf"|{_TQDM_STEP}"
            ).encode()
        )
        # The same, with line breaks as matches of their own: a chunk of metric lines is read by
        # one findall, its lines told apart by the breaks (see _dense_lines).
        self._dense = re.compile(self._pattern.pattern + rb"|(?P<eol>[\r\n])")
        self._series: dict[tuple[bytes, str], str] = {}  # (key or unit, which) -> series, as met
        self._scales: dict[bytes, float] = {}  # key -> its rule's scale, where that is not 1

    def _name(self, word: bytes, which: str) -> str:
        """The series a key (``which`` = "keys") or unit (``"units"``) belongs to."""
        name = self._series.get((word, which))
        if name is None:
            text = word.decode()
            phased = re.fullmatch(_PHASED_KEYS, text) if which == "keys" else None
            if which == "keys" and re.fullmatch(_STEP_KEYS, text):
                name = STEP
            elif phased is not None:
                rule = next(r for r in RULES if r.phased and re.fullmatch(r.keys, phased["of"]))
                name = f"{phased['phase']}_{rule.name}"
            else:
                rule = next(r for r in RULES if re.fullmatch(getattr(r, which) or "$^", text))
                name = rule.name
                if rule.scale != 1.0 and which == "keys":
                    self._scales[word] = rule.scale
            self._series[(word, which)] = name
        return name

    def lines(self, data: bytes) -> list[dict[str, float]]:
        """Per line of ``data`` that holds any metric, in order: {name: value} (the first of each
        name). A line ends at "\n" or "\r" (tqdm redraws its bar after "\r")."""
        low = data.lower()  # ASCII only: the offsets stay those of ``data``
        if not self._user and len(_HINTS.findall(low)) >= low.count(b"\n") + low.count(b"\r"):
            return self._dense_lines(low)
        found: dict[int, dict[str, float]] = {}  # a line's end -> its values
        starts: dict[int, int] = {}  # a line's end -> its start, for the lines the rules read
        for name, pattern in self._user:
            for start, end, number in _user_values(pattern, data):
                found.setdefault(end, {}).setdefault(name, number)
                starts[end] = start  # the user's line may hold a step too
        starts.update((end, start) for start, end, _ in _lines_with(_HINTS, low))
        for end in sorted(starts) if self._user else starts:
            values = found.get(end)
            for match in self._pattern.finditer(low, starts[end], end):
                form, key, rate, unit, step = match.group("form", "key", "rate", "unit", "step")
                if form is not None:
                    name, value = STEP, _form_step(form)
                elif key is not None:
                    name, value = self._name(key, "keys"), _number(match.group("value"))
                    if value is not None and key in self._scales:
                        value *= self._scales[key]
                elif unit is not None:
                    name, value = self._name(unit, "units"), _number(rate)
                else:
                    name, value = STEP, _number(step)
                if value is not None:
                    if values is None:
                        values = found[end] = {}
                    values.setdefault(name, value)
        return [found[end] for end in sorted(found)]

    def _dense_lines(self, low: bytes) -> list[dict[str, float]]:
        """:meth:`lines` of a chunk with hints on (nearly) every line: one ``findall`` of the
        whole chunk costs the same as a search per line, without the steps of each line."""
        found: list[dict[str, float]] = []
        values: dict[str, float] = {}
        names, scales = self._series, self._scales
        for form, key, after_key, rate, unit, step, eol in self._dense.findall(low):
            if eol:
                if values:
                    found.append(values)
                    values = {}
                continue
            if key:
                name, number = names.get((key, "keys")) or self._name(key, "keys"), after_key
            elif unit:
                name, number = names.get((unit, "units")) or self._name(unit, "units"), rate
            elif form:
                name, number = STEP, None
                global_step = _form_step(form)
                if global_step is not None:
                    values.setdefault(STEP, global_step)
            else:
                name, number = STEP, step
            value = _number(number)
            if value is not None:
                values.setdefault(name, value * scales[key] if key in scales else value)
        if values:
            found.append(values)
        return found


def _unnamed(pattern: str) -> str:
    """``pattern`` with its named groups made plain: the parser's groups alone are named."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


def _form_step(text: bytes) -> float | None:
    """The global step of a step form's match: (epoch - first) * batches per epoch + batch."""
    for form, pattern in _STEP_FORMS:
        match = pattern.match(text)
        if match is not None:
            found = match.groupdict()
            batch = int(found["batch"])
            if found.get("epoch") is None:
                return batch
            return (int(found["epoch"]) - form.first_epoch) * int(found["total"]) + batch
    return None


def _lines_with(pattern: Any, data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(start, end, first match) of every line of ``data`` where ``pattern`` finds a match, in
    order. The next search starts after the line found: each line is given once and the search
    always ends."""
    size = len(data)
    position = 0
    while position <= size and (match := pattern.search(data, position)) is not None:
        at = match.start()
        start = 1 + max(
            data.rfind(b"\n", position, at), data.rfind(b"\r", position, at), position - 1
        )
        ending = LINE_BREAKS.search(data, at)
        end = size if ending is None else ending.start()
        yield start, end, match
        position = end + 1


def _user_values(pattern: Any, data: bytes) -> Iterator[tuple[int, int, float]]:
    """(line start, line end, value) of each line of ``data`` where a user's pattern reads a
    number: the first match, or, when that is no number or runs past the line, the first of the
    line's own matches that is one."""
    for start, end, first in _lines_with(pattern, data):
        value = _user_value(pattern, first) if first.end() <= end else None
        if value is None:
            found = (_user_value(pattern, match) for match in pattern.finditer(data, start, end))
            value = next((number for number in found if number is not None), None)
        if value is not None:
            yield start, end, value


def _user_value(pattern: Any, match: Any) -> float | None:
    return _number(match.group(1) if pattern.groups else _value_of(match.group(0)))


def _value_of(matched: bytes) -> bytes:
    """A whole match as a value: itself, or the number it ends with (``acc=[0-9.]+``)."""
    number = _TRAILING_NUMBER.search(matched)
    return matched if number is None else number.group(0)


def _number(text: bytes | None) -> float | None:
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def throughput_batch(hyper: Mapping[str, str]) -> int | None:
    """The samples a rank's step takes, from the job's hyperparameters (``batch_size`` and
    the like) when one is a whole number: a printed step time becomes samples per second."""
    for name in BATCH_HYPERPARAMETERS:
        value = hyper.get(name, "")
        if value.isdecimal() and int(value) > 0:
            return int(value)
    return None


def parse_lines(parser: MetricParser, rank: int, data: bytes, now: float) -> list[Point]:
    """The points of ``data`` (complete lines) printed by ``rank``."""
    points = []
    for found in parser.lines(data):
        step = found.pop(STEP, None)
        batch = found.pop(BATCH, None) or parser.batch
        seconds = found.get(STEP_TIME)
        if batch and seconds and not any(name in found for name in THROUGHPUT):
            found["samples/s"] = batch / seconds  # ms/batch, time per iteration: a throughput
        at = None if step is None else int(step)
        for name, value in found.items():
            points.append(Point(rank, name, at, value, now))
    return points


# -- the per-job file ----------------------------------------------------------------------------
# One point a line: "rank<TAB>name<TAB>step<TAB>value<TAB>time"; step is empty when none was printed.


def append_points(path: Path, points: Iterable[Point]) -> None:
    text = "".join(
        f"{p.rank}\t{p.name}\t{'' if p.step is None else p.step}\t{p.value!r}\t{p.time:.3f}\n"
        for p in points
    )
    if text:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)


def _rows(path: Path, last_bytes: int | None = None) -> Iterator[list[str]]:
    """The stored points' fields (none when the file does not exist yet); with ``last_bytes``,
    only those of the file's end."""
    start = 0
    try:
        with path.open("rb") as handle:
            if last_bytes is not None:
                start = handle.seek(max(0, handle.seek(0, 2) - last_bytes))
            text = handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return
    for line in text.splitlines()[1 if start else 0 :]:  # from a file's end: the first may be cut
        fields = line.split("\t")
        if len(fields) == 5:  # else a line being written as we read
            yield fields


def read_points(path: Path, last_bytes: int | None = None) -> list[Point]:
    """Every point stored for a job; with ``last_bytes``, those of the file's end (what
    ``job list`` needs for the progress)."""
    return [
        Point(int(rank), name, int(step) if step else None, float(value), float(stamp))
        for rank, name, step, value, stamp in _rows(path, last_bytes)
    ]


@dataclass(frozen=True)
class Series:
    name: str
    rank: int  # -1: not a rank's (TensorBoard events)
    steps: list[int | None]
    values: list[float]
    times: list[float]

    def to_json(
        self,
        times: bool = True,
        limit: int | None = None,
        restarts: Sequence[float] | None = None,
    ) -> dict[str, object]:
        """As ``job metrics --json`` and the API give it; ``times`` (when each point was read)
        costs a third of the encoding, and charts do without. With ``limit``, at most that many
        points (see :meth:`downsampled`); ``count`` is the number of points stored. With
        ``restarts`` (when each attempt after the first began), what a chart draws the series
        by: ``attempts``, its points cut by attempt (see :func:`attempt_parts`), and
        ``printed_steps``, whether each attempt printed a rising step at every point."""
        shown = self if limit is None else self.downsampled(limit)
        found: dict[str, object] = {
            "name": self.name,
            "rank": self.rank,
            "count": len(self.values),
            "steps": shown.steps[:],  # copies: a reader's lists grow while the answer is written
            "values": shown.values[:],
        }
        if times:
            found["times"] = shown.times[:]
        if restarts is not None:
            parts = attempt_parts(shown.times, restarts)
            found["attempts"] = [list(part) for part in parts]
            found["printed_steps"] = all(rising(shown.steps[start:end]) for _, start, end in parts)
        return found

    def downsampled(self, limit: int) -> Series:
        """At most ``limit`` (4 or more) of the points, in order: the first, the last, and the
        lowest and highest of each of ``(limit - 2) // 2`` runs of neighbours, so that a chart
        of them shows every spike the full series has."""
        count = len(self.values)
        if count <= limit:
            return self
        runs = (limit - 2) // 2
        size = -(-count // runs)  # rounded up: at most ``runs`` runs
        kept = {0, count - 1}
        for start in range(0, count, size):
            run = self.values[start : start + size]
            kept.add(start + run.index(min(run)))
            kept.add(start + run.index(max(run)))
        order = sorted(kept)
        return Series(
            self.name,
            self.rank,
            [self.steps[i] for i in order],
            [self.values[i] for i in order],
            [self.times[i] for i in order],
        )


def attempt_parts(times: Sequence[float], restarts: Sequence[float]) -> list[tuple[int, int, int]]:
    """A series' points cut by attempt: (attempt, first index, end index) of each attempt that
    printed, in order. A point belongs to the last attempt begun when it was read; ``restarts``
    are when the attempts after the first began, in order."""
    parts: list[tuple[int, int, int]] = []
    attempt = start = 0
    for index, moment in enumerate(times):
        now = attempt
        while now < len(restarts) and moment >= restarts[now]:
            now += 1
        if now != attempt:
            if index > start:
                parts.append((attempt, start, index))
            attempt, start = now, index
    if len(times) > start:
        parts.append((attempt, start, len(times)))
    return parts


def rising(steps: Sequence[int | None]) -> bool:
    """Whether every point has a printed step, each above the one before: a chart's x axis can
    be the steps (an attempt resumed from a checkpoint prints steps again: one attempt at a time)."""
    previous: int | None = None
    for step in steps:
        if step is None or (previous is not None and step <= previous):
            return False
        previous = step
    return True


def read_series(path: Path, name: str | None = None, rank: int | None = None) -> list[Series]:
    """The stored points grouped by (name, rank), in the order they were printed; only those of
    ``name`` and ``rank`` when given. Straight from the file's fields: a page asks for 100,000."""
    grouped: dict[tuple[str, str], Series] = {}
    wanted_rank = None if rank is None else str(rank)
    _group(
        (
            row
            for row in _rows(path)
            if (name is None or row[1] == name) and (wanted_rank is None or row[0] == wanted_rank)
        ),
        grouped,
    )
    return sorted(grouped.values(), key=lambda s: (s.name, s.rank))


def _group(rows: Iterable[list[str]], grouped: dict[tuple[str, str], Series]) -> None:
    """Add the points of ``rows`` to their (name, rank) series in ``grouped``."""
    for rank_text, point_name, step, value, stamp in rows:
        found = grouped.get((point_name, rank_text))
        if found is None:
            found = grouped[(point_name, rank_text)] = Series(
                point_name, int(rank_text), [], [], []
            )
        found.steps.append(int(step) if step else None)
        found.values.append(float(value))
        found.times.append(float(stamp))


class SeriesReader:
    """The series of one metrics file, read on from where the last :meth:`read` stopped: a page
    asking every 2 seconds for the curves of a long job parses only the points added since."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._grouped: dict[tuple[str, str], Series] = {}

    def read(self) -> list[Series]:
        """Every series, up to the last complete line written (the lists grow in place)."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            data = b""
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        rows = (line.split("\t") for line in complete.decode("utf-8", "replace").splitlines())
        _group((fields for fields in rows if len(fields) == 5), self._grouped)
        return sorted(self._grouped.values(), key=lambda s: (s.name, s.rank))


@dataclass(frozen=True)
class Progress:
    """What ``job list`` shows of a running job: the last step, loss and throughput seen."""

    step: int | None
    loss: float | None
    throughput: tuple[str, float] | None  # (name, value)


THROUGHPUT = ("fps", "samples/s", "tokens/s", "it/s")


def progress(points: Iterable[Point]) -> Progress:
    """The last step, loss and throughput; where only the time a step takes is printed
    (``ms/batch``, ``s/it``), the throughput is the steps a second it gives."""
    step: int | None = None
    loss: float | None = None
    throughput: tuple[str, float] | None = None
    step_rate: tuple[str, float] | None = None
    for point in points:
        if point.step is not None:
            step = point.step if step is None else max(step, point.step)
        if point.name == "loss":
            loss = point.value
        elif point.name in THROUGHPUT:
            throughput = (point.name, point.value)
        elif point.name == STEP_TIME and point.value > 0:
            step_rate = ("it/s", 1 / point.value)
    return Progress(step, loss, throughput or step_rate)


PROGRESS_BYTES = 64 << 10  # the end of a job's metrics file holds its progress


def job_progress(path: Path) -> Progress:
    """The progress of the job whose metrics file is ``path``, from the file's end alone."""
    return progress(read_points(path, last_bytes=PROGRESS_BYTES))


def jobs_progress(store: JobStore, jobs: Iterable[JobRecord]) -> dict[str, Progress]:
    """Job id -> its progress, as ``job list`` shows it."""
    return {job.id: job_progress(JobLayout(store.job_dir(job.id), job.id).metrics) for job in jobs}
