"""``ascendify perf``'s answer: every rank's step split, the slow rank and its cause, as text or JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.perf.model import Problem, RankProfile, Totals
from ascendify.perf.sources import Found, gather, gather_folders
from ascendify.perf.verdict import RankSummary, Verdict, clock_notes, judge, summarise

BAR_WIDTH = 40
TOP_OPERATORS = 10
NAME_WIDTH = 100
# The stacked bar's characters: computing, communication not overlapped, free, preparing.
_BAR_PARTS = (
    ("computing", "#"),
    ("communication_not_overlapped", "="),
    ("free", "."),
    ("preparing", "-"),
)


@dataclass(frozen=True)
class Analysis:
    profiles: tuple[RankProfile, ...]
    summaries: tuple[RankSummary, ...]
    verdict: Verdict
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]


def analyse(path_or_job: str) -> Analysis:
    """Read every rank under ``path_or_job`` and judge them; AscendifyError when no rank is usable."""
    return _judged(gather(path_or_job), path_or_job)


def analyse_folders(folders: list[Path], expected: set[int], name: str) -> Analysis:
    """The same for given profile folders (a job's), ``expected`` the ranks that ran."""
    return _judged(gather_folders(folders, expected), name)


def _judged(found: Found, name: str) -> Analysis:
    if not found.profiles:
        lines = "; ".join(problem.line() for problem in found.problems)
        raise AscendifyError(f"{name}: no rank could be analysed: {lines}")
    profiles = tuple(found.profiles[rank] for rank in sorted(found.profiles))
    summaries = tuple(summarise(profile) for profile in profiles)
    links = [link for profile in profiles for link in profile.links]
    verdict = judge(profiles, links)
    step = sorted(s.step_ms for s in summaries)[len(summaries) // 2]
    notes = [*found.notes, *clock_notes(profiles, step)]
    notes += [f"rank {p.rank}: {note}" for p in profiles for note in p.notes]
    return Analysis(profiles, summaries, verdict, tuple(found.problems), tuple(notes))


def top_operators(totals: Totals, count: int = TOP_OPERATORS) -> list[dict[str, Any]]:
    ranked = sorted(totals.microseconds.items(), key=lambda item: -item[1])[:count]
    return [
        {"name": name, "total_ms": round(us / 1000, 3), "calls": totals.calls.get(name, 0)}
        for name, us in ranked
    ]


def to_json(analysis: Analysis) -> dict[str, Any]:
    ranks = []
    for profile, summary in zip(analysis.profiles, analysis.summaries, strict=True):
        ranks.append(
            {
                "rank": profile.rank,
                "format": profile.format,
                "source": str(profile.source),
                "timeline": profile.timeline,
                "steps": [_rounded(asdict(step)) for step in profile.steps],
                "median": _rounded({k: v for k, v in asdict(summary).items() if k != "rank"}),
                "top_operators": top_operators(profile.operators),
                "links": [
                    {
                        "link": link.name,
                        "megabytes": link.megabytes,
                        "milliseconds": link.milliseconds,
                        "bandwidth_gb_s": round(link.bandwidth_gb_s, 3),
                    }
                    for link in profile.links
                ],
            }
        )
    return {
        "ranks": ranks,
        "slow_ranks": list(analysis.verdict.slow_ranks),
        "cause": analysis.verdict.cause,
        "verdict": analysis.verdict.sentence,
        "problems": [
            {"rank": p.rank, "source": str(p.source), "message": p.message}
            for p in analysis.problems
        ],
        "notes": list(analysis.notes),
    }


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()}


def render(analysis: Analysis) -> str:
    lines = [f"verdict: {analysis.verdict.sentence}", ""]
    lines.append(
        "median step per rank (ms):  # computing  = communication not overlapped  . free  - preparing"
    )
    lines.append(
        f"{'rank':>5} {'steps':>5} {'step':>9} {'compute':>9} {'comm':>9} {'overlap':>9} {'free':>9} {'prepare':>9}"
    )
    longest = max(s.step_ms for s in analysis.summaries) or 1.0
    slow = set(analysis.verdict.slow_ranks)
    for s in analysis.summaries:
        mark = " <- slow" if s.rank in slow else ""
        lines.append(
            f"{s.rank:>5} {s.steps:>5} {s.step_ms:>9.2f} {s.computing_ms:>9.2f} "
            f"{s.communication_not_overlapped_ms:>9.2f} {s.overlapped_ms:>9.2f} {s.free_ms:>9.2f} "
            f"{s.preparing_ms:>9.2f}  {_bar(s, longest)}{mark}"
        )
    timelines = sorted({p.timeline for p in analysis.profiles if p.timeline})
    lines.append(f"measured on: {'; '.join(timelines)}")
    operators = Totals()
    for profile in analysis.profiles:
        for name, us in profile.operators.microseconds.items():
            operators.microseconds[name] = operators.microseconds.get(name, 0.0) + us
            operators.calls[name] = operators.calls.get(name, 0) + profile.operators.calls.get(
                name, 0
            )
    if operators.microseconds:
        lines += ["", "top operators (all ranks, inclusive time):"]
        lines += [
            f"  {op['total_ms']:>10.2f} ms  {op['calls']:>7} calls  {_short(op['name'])}"
            for op in top_operators(operators, 5)
        ]
    for link in analysis.verdict.slow_links:
        lines.append(f"slow link: {link.name}: {link.bandwidth_gb_s:.2f} GB/s")
    lines += [f"problem: {problem.line()}" for problem in analysis.problems]
    lines += [f"note: {note}" for note in analysis.notes]
    return "\n".join(lines)


def _short(name: str) -> str:
    """A kernel's name cut short: C++ template and argument lists run to pages."""
    return name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 3] + "..."


def _bar(summary: RankSummary, longest: float) -> str:
    text = ""
    for part, character in _BAR_PARTS:
        text += character * round(getattr(summary, f"{part}_ms") / longest * BAR_WIDTH)
    return text
