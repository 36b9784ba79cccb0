"""Which rank is slow, and why, from every rank's step split.

In synchronous training every rank's step lasts as long as the slowest rank's: the others wait for
it in the next collective. So a straggler shows as the rank that waits least: its *working time*
(the step less communication not overlapped) stands out, while the healthy ranks' surplus shows as
communication not overlapped. Per rank the median over its steps is used (the first profiled
step carries the profiler's own start-up). A rank is slow when its working time passes the
others' (the lower median of all ranks) by more than :data:`SLOW_SHARE` of the step and by more
than :data:`NOISE_TIMES` the ranks' step-to-step variation, in most steps. The cause is
the part in which its excess lies: ``compute`` (computing), or ``host`` (free and preparing: the
device, or the thread, had nothing to do: data loading, Python, dispatch). With no slow rank, a
link whose bandwidth is far below its peers' (:data:`SLOW_LINK_SHARE`) makes the cause
``communication``. Otherwise the ranks are balanced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median

from ascendify.perf.model import Link, RankProfile, StepSplit

SLOW_SHARE = 0.2  # of the median step: below it, differences are noise of a shared machine
SLOW_LINK_SHARE = 0.5  # of the median bandwidth of the links of the same transport
WAITING_SHARE = 0.3  # communication not overlapped above this share of the step is worth saying
NOISE_TIMES = 3.0  # the step-to-step variation of working time a slow rank's excess must pass
STEADY_SHARE = 0.75  # of the steps every rank profiled in which a slow rank must stand out
CLOCK_SKEW_STEPS = 10  # a rank whose step starts this many steps off the others' is out of step


@dataclass(frozen=True)
class RankSummary:
    """A rank's median step (each part is the median of that part over its steps)."""

    rank: int
    steps: int
    step_ms: float
    working_ms: float
    computing_ms: float
    communication_not_overlapped_ms: float
    overlapped_ms: float
    free_ms: float
    preparing_ms: float

    @property
    def idle_ms(self) -> float:
        return self.free_ms + self.preparing_ms


@dataclass(frozen=True)
class Verdict:
    slow_ranks: tuple[int, ...]
    cause: str | None  # "compute" | "host" | "communication" | None
    sentence: str
    slow_links: tuple[Link, ...] = ()


def summarise(profile: RankProfile) -> RankSummary:
    def middle(part: Callable[[StepSplit], float]) -> float:
        return median(part(step) for step in profile.steps)

    return RankSummary(
        rank=profile.rank,
        steps=len(profile.steps),
        step_ms=middle(lambda s: s.step_ms),
        working_ms=middle(lambda s: s.working_ms),
        computing_ms=middle(lambda s: s.computing_ms),
        communication_not_overlapped_ms=middle(lambda s: s.communication_not_overlapped_ms),
        overlapped_ms=middle(lambda s: s.overlapped_ms),
        free_ms=middle(lambda s: s.free_ms),
        preparing_ms=middle(lambda s: s.preparing_ms),
    )


def judge(profiles: Sequence[RankProfile], links: Sequence[Link] = ()) -> Verdict:
    summaries = [summarise(profile) for profile in profiles]
    if not summaries:
        return Verdict((), None, "no rank could be analysed")
    step = median(summary.step_ms for summary in summaries)
    steady = _steadily_ahead(profiles)
    margin = max(SLOW_SHARE * step, NOISE_TIMES * _noise(profiles))
    slow = [s for s in _slow_ranks(summaries, margin) if s.rank in steady]
    if slow:
        return _straggler(summaries, slow)
    slow_links = _slow_links(links)
    if slow_links:
        ranks = sorted(
            {
                end
                for link in slow_links
                for end in (link.source, link.destination)
                if end is not None
            }
        )
        shown = ", ".join(f"{link.name} {link.bandwidth_gb_s:.1f} GB/s" for link in slow_links)
        return Verdict(
            tuple(ranks),
            "communication",
            f"slow link: {shown}, under half the bandwidth of the other links of its transport; "
            f"rank(s) {_ranks(ranks)} wait on it",
            tuple(slow_links),
        )
    return Verdict((), None, _balanced(summaries, step))


def _slow_ranks(summaries: Sequence[RankSummary], margin: float) -> list[RankSummary]:
    if len(summaries) < 2:
        return []
    ordered = sorted(summary.working_ms for summary in summaries)
    baseline = ordered[(len(ordered) - 1) // 2]  # the lower median: the healthy ranks' pace
    return [s for s in summaries if s.working_ms - baseline > margin]


def _noise(profiles: Sequence[RankProfile]) -> float:
    """How much a rank's working time varies from step to step: the median over the ranks of
    each rank's median absolute deviation. A straggler's excess must stand above it."""
    deviations = []
    for profile in profiles:
        working = [step.working_ms for step in profile.steps]
        middle = median(working)
        deviations.append(median(abs(value - middle) for value in working))
    return median(deviations)


def _steadily_ahead(profiles: Sequence[RankProfile]) -> set[int]:
    """Ranks whose working time passes the step's lower median in most of the steps all ranks
    profiled (:data:`STEADY_SHARE`): a one-off stall of a rank (the machine's, the profiler's)
    makes no straggler. Every rank when the ranks share no step."""
    common = set.intersection(*({s.step for s in p.steps} for p in profiles))
    if not common:
        return {p.rank for p in profiles}
    ahead: dict[int, int] = {p.rank: 0 for p in profiles}
    working = {p.rank: {s.step: s for s in p.steps} for p in profiles}
    for number in common:
        splits = {rank: steps[number] for rank, steps in working.items()}
        ordered = sorted(split.working_ms for split in splits.values())
        baseline = ordered[(len(ordered) - 1) // 2]
        step = median(split.step_ms for split in splits.values())
        for rank, split in splits.items():
            if split.working_ms - baseline > SLOW_SHARE * step:
                ahead[rank] += 1
    return {rank for rank, count in ahead.items() if count >= STEADY_SHARE * len(common)}


def _straggler(summaries: Sequence[RankSummary], slow: list[RankSummary]) -> Verdict:
    healthy = [s for s in summaries if s not in slow]

    def excess(part: Callable[[RankSummary], float]) -> float:
        usual = median(part(s) for s in healthy)
        return median(part(s) for s in slow) - usual

    extra_compute, extra_idle = excess(lambda s: s.computing_ms), excess(lambda s: s.idle_ms)
    cause = "compute" if extra_compute >= extra_idle else "host"
    ranks = [s.rank for s in slow]
    waiting = median(s.communication_not_overlapped_ms for s in healthy)
    why = (
        f"its computing takes {extra_compute:+.1f} ms more per step than the others'"
        if cause == "compute"
        else f"it sits idle {extra_idle:+.1f} ms more per step than the others (free and "
        "preparing: data loading, Python or dispatch before its work)"
    )
    return Verdict(
        tuple(ranks),
        cause,
        f"rank {_ranks(ranks)} {'is' if len(ranks) == 1 else 'are'} slow ({cause}): {why}, "
        f"while the other ranks wait {waiting:.1f} ms per step for it in communication",
    )


def _slow_links(links: Sequence[Link]) -> list[Link]:
    groups: dict[tuple[str, bool], list[Link]] = {}
    for link in links:
        groups.setdefault((link.transport, link.destination is None), []).append(link)
    slow = []
    for group in groups.values():
        if len(group) < 2:
            continue
        usual = median(link.bandwidth_gb_s for link in group)
        slow += [link for link in group if link.bandwidth_gb_s < SLOW_LINK_SHARE * usual]
    return slow


def _balanced(summaries: Sequence[RankSummary], step: float) -> str:
    if len(summaries) == 1:
        return f"one rank (median step {step:.1f} ms): nothing to compare it with"
    spread = max(s.working_ms for s in summaries) - min(s.working_ms for s in summaries)
    sentence = (
        f"balanced: no rank stands out (median step {step:.1f} ms, working time within "
        f"{spread:.1f} ms across {len(summaries)} ranks)"
    )
    waiting = min(s.communication_not_overlapped_ms / s.step_ms for s in summaries if s.step_ms > 0)
    if waiting > WAITING_SHARE:
        sentence += (
            f"; every rank spends at least {waiting:.0%} of its step in communication not "
            "overlapped: the job waits on communication, not on one rank"
        )
    return sentence


def clock_notes(profiles: Sequence[RankProfile], step: float) -> list[str]:
    """Ranks whose first common step starts far from the others': clocks out of step, or traces
    of different runs. Only durations are compared, so their splits stand."""
    starts = {p.rank: p.step_start_us for p in profiles if p.step_start_us is not None}
    firsts = {p.rank: p.steps[0].step for p in profiles if p.step_start_us is not None}
    if len(starts) < 2 or len(set(firsts.values())) != 1:
        return []
    usual = median(starts.values())
    bound = max(CLOCK_SKEW_STEPS * step * 1000, 1e6)
    return [
        f"rank {rank}: its steps start {(start - usual) / 1e6:+.1f} s from the others' (clocks "
        "out of step, or a trace of another run); its split is used, its time stamps are not"
        for rank, start in sorted(starts.items())
        if abs(start - usual) > bound
    ]


def _ranks(ranks: Sequence[int]) -> str:
    return ", ".join(str(rank) for rank in ranks)
