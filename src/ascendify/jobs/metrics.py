"""Numeric series read from what the ranks print (loss, lr, throughput, per step). Data + small
functions; no change to the training code.

Each :class:`MetricRule` names a series and the ways it is printed: ``KEY SEP VALUE`` with the
separators training code uses (``loss: 1.2``, ``loss=1.2``, ``Loss 1.2``, ``| loss 1.2 |``,
``'loss': 1.2``, ``loss is 1.2``) and, for rates, ``VALUE UNIT`` (tqdm's ``15.3it/s``). A step or
iteration number on the same line (``step 5``, ``iter 10:``, tqdm's ``45/100 [``) is the point's
step. All rules are one regular expression run over a whole chunk of output at once (no Python
loop per line), so reading 10,000 lines a second costs little. Users add rules as
``NAME=REGEX`` (``--metric``, spec field ``metrics``): the regex's first group (else the whole
match) is the value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MetricRule:
    code: str  # stable, for docs and messages
    name: str  # the series it feeds
    keys: str  # regex: the names the value is printed under ("KEY: VALUE")
    units: str = ""  # regex: units printed after the value ("VALUE UNIT"); rates only
    message: str = ""


RULES: tuple[MetricRule, ...] = (
    MetricRule("MT001", "loss", r"(?:train[_/ ]?)?loss|total_loss", message="training loss"),
    MetricRule(
        "MT002", "eval_loss", r"(?:eval|val|valid|validation|test)[_/ ]?loss", message="eval loss"
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
)
STEP = "step"
# A step or iteration number: "step 5", "Step [10/600]", "iter 10:", "global_step=7"; tqdm's "45/100 [".
_STEP_KEYS = r"global_step|step|iteration|iter"
_TQDM_STEP = r"(?<![\w.])(\d+)/\d+ \["
_NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
# After the key: an optional closing quote, then ":", "=", "is" or blanks, an optional "[" or
# "tensor(" (print(loss) of a tensor).
_SEPARATOR = r"""['"]?\s*(?:[:=]|\bis\b)?\s*(?:\[\s*|tensor\()?"""
_LINE_BREAKS = re.compile(r"[\r\n]")  # tqdm redraws its bar after "\r"


class MetricPatternError(ValueError):
    """A user's ``NAME=REGEX`` that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Point:
    rank: int
    name: str
    step: int | None
    value: float
    time: float


def user_rules(patterns: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """Check ``{NAME: REGEX}`` from ``--metric``/the spec; returns them as (name, regex) pairs."""
    checked = []
    for name, pattern in patterns.items():
        if not re.fullmatch(r"[A-Za-z_][\w./-]{0,63}", name):
            raise MetricPatternError(f"{name!r}: a metric name is letters, digits, _ . / -")
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            message = f"{name}: {pattern!r} is not a regular expression: {error}"
            raise MetricPatternError(message) from None
        if compiled.groupindex:
            raise MetricPatternError(f"{name}: use a plain group (...) for the value, not (?P<>)")
        checked.append((name, pattern))
    return tuple(checked)


class MetricParser:
    """Every rule (the user's first: they win where both match) as one expression."""

    def __init__(self, user: Iterable[tuple[str, str]] = ()) -> None:
        parts: list[str] = []
        self._names: list[str] = []  # per alternative: the series it feeds
        self._value_offset: list[int] = []  # per alternative: its value group, after its own

        def add(name: str, pattern: str, offset: int) -> None:
            parts.append(f"(?P<a{len(parts)}>{pattern})")
            self._names.append(name)
            self._value_offset.append(offset)

        for name, pattern in user:
            add(name, pattern, 1 if re.compile(pattern).groups else 0)
        add(STEP, rf"(?<![\w/.])(?i:{_STEP_KEYS})(?!\w){_SEPARATOR}(\d+)", 1)
        add(STEP, _TQDM_STEP, 1)
        for rule in RULES:
            add(rule.name, rf"(?<![\w/.])['\"]?(?i:{rule.keys})(?![\w/]){_SEPARATOR}({_NUMBER})", 1)
            if rule.units:
                add(rule.name, rf"(?<![\w.])({_NUMBER}) ?(?i:{rule.units})(?![\w/])", 1)
        self._pattern = re.compile("|".join(parts), re.MULTILINE)
        self._groups = [self._pattern.groupindex[f"a{i}"] for i in range(len(parts))]
        self._alternative = {group: i for i, group in enumerate(self._groups)}

    def lines(self, text: str) -> Iterator[dict[str, float]]:
        """Per line of ``text`` that holds any metric: {name: value} (the first of each name)."""
        line_start, found = -1, dict[str, float]()
        for match in self._pattern.finditer(text):
            alternative = self._alternative[match.lastindex or 0]
            group = self._groups[alternative] + self._value_offset[alternative]
            try:
                value = float(match.group(group))
            except (TypeError, ValueError):
                continue
            if not math.isfinite(value):
                continue
            start = max(text.rfind("\n", 0, match.start()), text.rfind("\r", 0, match.start()))
            if start != line_start:
                if found:
                    yield found
                line_start, found = start, {}
            found.setdefault(self._names[alternative], value)
        if found:
            yield found


def parse_lines(parser: MetricParser, rank: int, text: str, now: float) -> list[Point]:
    """The points of ``text`` (complete lines) printed by ``rank``."""
    points = []
    for found in parser.lines(text):
        step = found.pop(STEP, None)
        for name, value in found.items():
            points.append(Point(rank, name, None if step is None else int(step), value, now))
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

    def to_json(self, times: bool = True) -> dict[str, object]:
        """As ``job metrics --json`` and the API give it; ``times`` (when each point was read)
        costs a third of the encoding, and charts do without."""
        found: dict[str, object] = {
            "name": self.name,
            "rank": self.rank,
            "steps": self.steps,
            "values": self.values,
        }
        if times:
            found["times"] = self.times
        return found


def read_series(path: Path, name: str | None = None, rank: int | None = None) -> list[Series]:
    """The stored points grouped by (name, rank), in the order they were printed; only those of
    ``name`` and ``rank`` when given. Straight from the file's fields: a page asks for 100,000."""
    grouped: dict[tuple[str, str], Series] = {}
    wanted_rank = None if rank is None else str(rank)
    for rank_text, point_name, step, value, stamp in _rows(path):
        if (name is not None and point_name != name) or (
            wanted_rank is not None and rank_text != wanted_rank
        ):
            continue
        found = grouped.get((point_name, rank_text))
        if found is None:
            found = grouped[(point_name, rank_text)] = Series(
                point_name, int(rank_text), [], [], []
            )
        found.steps.append(int(step) if step else None)
        found.values.append(float(value))
        found.times.append(float(stamp))
    return sorted(grouped.values(), key=lambda s: (s.name, s.rank))


@dataclass(frozen=True)
class Progress:
    """What ``job list`` shows of a running job: the last step, loss and throughput seen."""

    step: int | None
    loss: float | None
    throughput: tuple[str, float] | None  # (name, value)


THROUGHPUT = ("fps", "samples/s", "tokens/s", "it/s")


def progress(points: Iterable[Point]) -> Progress:
    step: int | None = None
    loss: float | None = None
    throughput: tuple[str, float] | None = None
    for point in points:
        if point.step is not None:
            step = point.step if step is None else max(step, point.step)
        if point.name == "loss":
            loss = point.value
        elif point.name in THROUGHPUT:
            throughput = (point.name, point.value)
    return Progress(step, loss, throughput)


PROGRESS_BYTES = 64 << 10  # the end of a job's metrics file holds its progress


def job_progress(path: Path) -> Progress:
    """The progress of the job whose metrics file is ``path``, from the file's end alone."""
    return progress(read_points(path, last_bytes=PROGRESS_BYTES))
