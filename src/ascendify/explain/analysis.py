"""From every rank's findings to one verdict: the rank that went wrong first and why, and the
ranks that failed only because of it (their collectives timed out or lost their peer).

Ranks are ordered by the time of their first finding (time stamps in the lines or the launcher's
time marks), else by the order in which they exited (the launcher's summary names the first). The
root cause is the earliest rank whose most telling finding is a cause; when every rank only
echoes (all timed out waiting), the earliest rank is named and the echo's own advice applies.
When no catalogue entry matched but the run failed, the verdict is the failing rank's own end
(:mod:`ascendify.explain.unmatched`), marked "no catalogue entry matched".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ascendify.explain.catalogue import Catalogue, Signature
from ascendify.explain.reader import Finding
from ascendify.explain.sources import Inputs, Skipped
from ascendify.explain.unmatched import Unmatched, unmatched
from ascendify.moments import iso_time
from ascendify.runfolder import SUMMARY_NAME
from ascendify.terminal_text import printable_path

MAX_FINDINGS = 200  # kept per rank (the first ones); the rest are only counted
WRAPPER_REACH = 12  # lines above a detail searched for the line it explains


@dataclass
class RankReport:
    who: int | str
    findings: list[Finding] = field(default_factory=list)
    dropped: int = 0
    exit_code: int | None = None
    signal: str | None = None

    @property
    def first_time(self) -> float | None:
        times = [f.time for f in self.findings if f.time is not None]
        return min(times) if times else None

    @property
    def headline(self) -> Finding:
        """The finding that says most about this rank: a specific cause, then a specific echo,
        then generic lines; the earliest of its kind, unless a line just below it fills the
        entry's fields where it does not (the device's own words for an aicore fault under the
        line that only names the fault), whether that line is read as the same entry or as a
        more specific detail (the out-of-range address the device's words name)."""
        first = min(self.findings, key=_weight)
        if first.told:
            return first
        below = (
            finding
            for finding in self.findings
            if finding.path == first.path
            and first.line_no < finding.line_no <= first.line_no + WRAPPER_REACH
            and _tells_more_of(first, finding)
        )
        return next(below, first)

    @property
    def role(self) -> str:
        return self.headline.signature.role

    @property
    def wrapper(self) -> Finding | None:
        """The line the headline came out from under: the nearest code, wrapper line or exception
        of the same log in the few lines above it (``RuntimeError: call aclnnX failed, error code
        is 561002`` above the EZ9999 line that says why), when the headline is such a detail."""
        headline = self.headline
        above = [
            finding
            for finding in self.findings
            if finding.path == headline.path
            and headline.line_no - WRAPPER_REACH <= finding.line_no < headline.line_no
            and finding.signature is not headline.signature
        ]
        return max(above, key=lambda f: f.line_no) if above and headline.signature.detail else None


@dataclass
class Explanation:
    ranks: list[RankReport]  # in the order they went wrong
    root: RankReport | None
    all_echo: bool  # no rank failed by itself: they all waited (the cause is a slow or lost rank)
    awaited: int | None = None  # when they all waited: the rank their timeouts name as the late one
    unmatched: Unmatched | None = None  # the run failed, but no catalogue entry matched
    skipped: list[Skipped] = field(default_factory=list)  # files not read, or read in part

    @property
    def echoes(self) -> list[RankReport]:
        return [rank for rank in self.ranks if rank is not self.root]

    @property
    def found(self) -> bool:
        return self.root is not None or self.unmatched is not None


def explain(findings: Iterable[Finding], inputs: Inputs, catalogue: Catalogue) -> Explanation:
    ranks: dict[int | str, RankReport] = {}
    last_attempt = _last_attempt_start(inputs)
    for finding in findings:
        if finding.marked and finding.time is not None and finding.time < last_attempt:
            continue  # an earlier attempt's failure, which a restart got past
        report = ranks.setdefault(finding.who, RankReport(finding.who))
        if len(report.findings) < MAX_FINDINGS:
            report.findings.append(finding)
        else:
            report.dropped += 1
    _give_untagged_lines_their_rank(ranks)
    exit_order = _exit_facts(inputs, ranks, catalogue)
    reports = [report for report in ranks.values() if report.findings]
    reports.sort(key=lambda r: _order_key(r, exit_order))
    causes = [r for r in reports if r.role == "cause"]
    specific = [r for r in causes if not r.headline.signature.generic]
    candidates = specific or causes or reports
    root = candidates[0] if candidates else None
    all_echo = bool(reports) and not causes
    return Explanation(
        reports,
        root,
        all_echo,
        awaited=_awaited(reports) if all_echo else None,
        unmatched=unmatched(inputs) if root is None else None,
        skipped=inputs.skipped,
    )


def _give_untagged_lines_their_rank(ranks: dict[int | str, RankReport]) -> None:
    """A log without a rank of its own whose tagged lines all name one rank (``RankID:2``) is that
    rank's log: its untagged lines (the traceback's ``RuntimeError: ...``) are that rank's too."""
    named: dict[Path, set[int]] = {}
    for who, report in ranks.items():
        if isinstance(who, int):
            for finding in report.findings:
                named.setdefault(finding.path, set()).add(who)
    for who in [who for who in ranks if isinstance(who, str)]:
        paths = {finding.path for finding in ranks[who].findings}
        owners = set().union(*(named.get(path, set()) for path in paths))
        if len(owners) != 1 or any(len(named.get(path, ())) != 1 for path in paths):
            continue
        owner = ranks[owners.pop()]
        for finding in ranks.pop(who).findings:
            if len(owner.findings) < MAX_FINDINGS:
                owner.findings.append(replace(finding, who=owner.who))
            else:
                owner.dropped += 1


def _awaited(reports: list[RankReport]) -> int | None:
    """The rank the waiting ranks' timeouts name most often (``retrieving ncclUniqueId from [0]``,
    ``remote rank: [3]``), when it is not one of them: the rank that never arrived."""
    waiting = {report.who for report in reports}
    named = Counter(
        finding.peer
        for report in reports
        for finding in report.findings
        if finding.peer is not None and finding.peer not in waiting
    )
    return named.most_common(1)[0][0] if named else None


def _last_attempt_start(inputs: Inputs) -> float:
    """When the last attempt of a restarted run began (the rank logs keep every attempt)."""
    starts = [
        attempt.get("start", 0.0)
        for summary in inputs.summaries
        for attempt in summary.get("attempts") or ()
        if isinstance(attempt, dict)
    ]
    return max((s for s in starts if isinstance(s, int | float)), default=0.0)


def _tells_more_of(first: Finding, finding: Finding) -> bool:
    """Whether ``finding`` fills the fields ``first``'s entry left empty: a line of the same
    entry that tells them, or a specific cause detail whose line also tells ``first``'s entry."""
    if finding.signature is first.signature:
        return finding.told
    signature = finding.signature
    return (
        signature.detail
        and signature.role == "cause"
        and not signature.generic
        and bool(first.signature.fields(finding.text))
    )


def _weight(finding: Finding) -> tuple[int, bool, int, float, int]:
    """A specific cause first, and among those the detail a code's message gives (the tiling
    failure under ``error code is 561002``, the E30006 under 507033) before the code itself."""
    signature = finding.signature
    kind = (signature.generic, signature.role != "cause")
    order = {(False, False): 0, (False, True): 1, (True, False): 2, (True, True): 3}[kind]
    when = finding.time if finding.time is not None else float("inf")
    return order, not signature.detail, signature.order if order else 0, when, finding.line_no


def _order_key(
    report: RankReport, exit_order: dict[int | str, int]
) -> tuple[float, int, bool, str]:
    """Time first, then the order of exit; without either, ranks that failed by themselves
    come before those that waited for them."""
    first = report.first_time
    position = exit_order.get(report.who, len(exit_order) + 1)
    when = first if first is not None else float("inf")
    return (when, position, report.role != "cause", str(report.who))


def _exit_facts(
    inputs: Inputs, ranks: dict[int | str, RankReport], catalogue: Catalogue
) -> dict[int | str, int]:
    """Exit codes from the launcher's summaries; a rank killed from outside gets the signal's
    finding; returns the exit order known (the summary's first failed rank comes first)."""
    order: dict[int | str, int] = {}
    for summary in inputs.summaries:
        root = summary.get("root_cause") or {}
        if isinstance(root.get("rank"), int) and root["rank"] >= 0:
            order.setdefault(root["rank"], 0)
        for key, record in (summary.get("ranks") or {}).items():
            if not str(key).isdigit() or not isinstance(record, dict):
                continue
            rank = int(key)
            report = ranks.setdefault(rank, RankReport(rank))
            report.exit_code = record.get("exit_code")
            report.signal = record.get("signal")
            signature = catalogue.for_signal(report.signal or "")
            if signature is not None and not record.get("stopped_by_launcher"):
                report.findings.append(_signal_finding(rank, signature, report.signal or "", root))
    return order


def _signal_finding(rank: int, signature: Signature, name: str, root: dict[str, Any]) -> Finding:

    when = root.get("time") if root.get("rank") == rank else None
    return Finding(
        who=rank,
        signature=signature,
        path=Path(root.get("log_path") or SUMMARY_NAME),
        line_no=0,
        time=when,
        text=f"rank {rank} was killed by {name}",
    )


# -- presenting -----------------------------------------------------------------------------------


def when_text(stamp: float | None) -> str:
    if stamp is None:
        return "time unknown"
    return iso_time(stamp, milliseconds=True)


def rank_name(who: int | str) -> str:
    return f"rank {who}" if isinstance(who, int) else str(who)


def short_cause(explanation: Explanation) -> str | None:
    """``rank 1: ValueError: boom`` or ``rank 3: NPU-OOM``: the CAUSE cell of ``job list``."""
    root, other = explanation.root, explanation.unmatched
    if root is None:
        return None if other is None else f"{rank_name(other.who)}: {_clip(other.headline, 60)}"
    headline = root.headline
    what = _clip(headline.text, 60) if headline.exception else headline.signature.id
    return f"{rank_name(root.who)}: {what}"


def cause_line(explanation: Explanation) -> str | None:
    """One line for a failed run's end and ``job describe``; None when nothing failed."""
    short = short_cause(explanation)
    other = explanation.unmatched
    if other is not None and other.error is not None:
        return f"{short} ({other.how}; no catalogue entry matched)"
    if other is not None:
        ends = f"; its log ends: {_clip(other.last_lines[-1], 80)}" if other.last_lines else ""
        return f"{short} (no catalogue entry matched{ends})"
    if short is None or explanation.root is None:
        return None
    headline = explanation.root.headline
    text = f"{short} ({headline.signature.layer_name})"
    if explanation.all_echo:
        text += ": every rank timed out waiting; this one first"
        if explanation.awaited is not None:
            text += f", waiting for rank {explanation.awaited}"
    if headline.oom:
        return f"{text} - {headline.oom.advice()}"
    return text if headline.signature.generic else f"{text} - {headline.fix}"


def render(explanation: Explanation) -> str:
    root = explanation.root
    if root is None:
        if explanation.unmatched is not None:
            return "\n".join(_unmatched_lines(explanation.unmatched) + _skipped_lines(explanation))
        return "\n".join(["no known failure found in these logs", *_skipped_lines(explanation)])
    headline = root.headline
    signature = headline.signature
    title = (
        "root cause"
        if not explanation.all_echo
        else "first rank to time out (no rank failed by itself)"
    )
    lines = [
        f"{title}: {rank_name(root.who)}, first went wrong at {when_text(root.first_time)}",
        f"  {_clip(headline.text)}",
        f"  at {_where(headline)}",
        *([f"  under: {_clip(wrapper.text)}"] if (wrapper := root.wrapper) is not None else []),
        f"  [{signature.id}, {signature.layer_name}] {headline.meaning}",
        "  likely causes:",
        *(f"    {number}. {cause}" for number, cause in enumerate(signature.causes, 1)),
        f"  fix: {headline.fix}",
    ]
    if explanation.awaited is not None:
        lines.append(
            f"  waited for: rank {explanation.awaited}, which never arrived (it has no error of "
            "its own here: it was late, hung or ended without a word)"
        )
    if headline.oom is not None:
        lines.append(f"  memory: {headline.oom.advice()}")
    lines.append(f"  source: {signature.source}")
    others = [
        f for f in root.findings if f.signature.id != signature.id and not f.signature.generic
    ]
    if others:
        lines.append("  also on this rank:")
        lines += [
            f"    {f.signature.id} at line {f.line_no}: {_clip(f.text, 100)}" for f in others[:5]
        ]
    echoes = explanation.echoes
    if echoes:
        lines += [
            "",
            "consequences (later, or waiting for it):" if not explanation.all_echo else "then:",
        ]
        for report in echoes:
            f = report.headline
            lines.append(
                f"  {rank_name(report.who)} at {when_text(report.first_time)}: {f.signature.id} "
                f"({f.signature.role}): {_clip(f.text, 120)}"
            )
    lines += ["", "order of failure: " + ", ".join(rank_name(r.who) for r in explanation.ranks)]
    return "\n".join(lines + _skipped_lines(explanation))


def _where(finding: Finding) -> str:
    path = printable_path(finding.path)
    return f"{path}:{finding.line_no}" if finding.line_no else path


def _unmatched_lines(other: Unmatched) -> list[str]:
    """The failing rank's end, when no catalogue entry matched."""
    lines = [
        f"no catalogue entry matched: {rank_name(other.who)} failed first ({other.how}), "
        f"at {when_text(other.time)}",
    ]
    if other.error:
        kind = "innermost exception" if other.exception else "last error line"
        lines.append(f"  {kind}: {_clip(other.error)}")
    if other.wrapper:
        lines.append(f"  raised again as: {_clip(other.wrapper)}")
    if other.path is not None:
        lines.append(f"  log: {printable_path(other.path)}")
    if other.last_lines:
        lines.append("  last lines of its log:")
        lines += [f"    {_clip(line)}" for line in other.last_lines]
    return lines


def _skipped_lines(explanation: Explanation) -> list[str]:
    if not explanation.skipped:
        return []
    return [
        "",
        "not read, or read in part:",
        *(f"  {printable_path(s.path)}: {printable_path(s.reason)}" for s in explanation.skipped),
    ]


def to_json(explanation: Explanation, findings: bool = True) -> dict[str, Any]:
    """The verdict as data; without ``findings``, each rank's headline only (what a job's page
    shows: a few kB, where every finding of a large job can be megabytes)."""
    other = explanation.unmatched
    return {
        "found": explanation.found,
        "matched": explanation.root is not None,
        "cause": cause_line(explanation),
        "short": short_cause(explanation),
        "all_echo": explanation.all_echo,
        "awaited": explanation.awaited,
        "root": _rank_json(explanation.root, findings)
        if explanation.root
        else (None if other is None else _unmatched_json(other)),
        "consequences": [_rank_json(r, findings) for r in explanation.echoes],
        "order": [r.who for r in explanation.ranks] or ([] if other is None else [other.who]),
        "unmatched": None if other is None else other.to_json(),
        "skipped": [
            {"path": printable_path(s.path), "reason": printable_path(s.reason)}
            for s in explanation.skipped
        ],
    }


def _rank_json(report: RankReport, findings: bool) -> dict[str, Any]:
    headline = report.headline
    shown: dict[str, Any] = {
        "rank": report.who,
        "first_time": report.first_time,
        "first_time_iso": None if report.first_time is None else iso_time(report.first_time),
        "exit_code": report.exit_code,
        "signal": report.signal,
        "headline": _finding_json(headline),
        "under": None if report.wrapper is None else _finding_json(report.wrapper),
    }
    if findings:
        shown["findings"] = [_finding_json(f) for f in report.findings]
        shown["more_findings"] = report.dropped
    return shown


UNMATCHED_ID = "UNMATCHED"


def _unmatched_json(other: Unmatched) -> dict[str, Any]:
    """The failing rank of an unmatched verdict in the shape of a matched root (what the job's
    page shows), its headline the error it ended with."""
    causes = [f"raised again as {other.wrapper}"] if other.wrapper else []
    causes.append(
        "the error its log ends with (its code, arguments or input)"
        if other.error
        else "an exit without an error message (sys.exit, os._exit, a script's exit)"
    )
    return {
        "rank": other.who,
        "first_time": other.time,
        "first_time_iso": None if other.time is None else iso_time(other.time),
        "exit_code": other.exit_code,
        "signal": other.signal,
        "headline": {
            "id": UNMATCHED_ID,
            "layer": "not in the catalogue",
            "role": "cause",
            "generic": True,
            "path": None if other.path is None else printable_path(other.path),
            "line": 0,
            "time": other.time,
            "text": other.headline,
            "exception": other.exception,
            "meaning": f"no catalogue entry matched: {rank_name(other.who)} failed first "
            f"({other.how})",
            "causes": causes,
            "fix": f"read the end of {rank_name(other.who)}'s log (ascendify explain prints its "
            "last lines) and fix what it says",
            "versions": "any",
            "source": "",
            "oom": None,
        },
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    signature = finding.signature
    return {
        "id": signature.id,
        "layer": signature.layer_name,
        "role": signature.role,
        "generic": signature.generic,
        "path": printable_path(finding.path),
        "line": finding.line_no,
        "time": finding.time,
        "text": finding.text,
        "exception": finding.exception,
        "meaning": finding.meaning,
        "causes": list(signature.causes),
        "fix": finding.fix,
        "versions": signature.versions,
        "source": signature.source,
        "oom": finding.oom.to_json() if finding.oom else None,
    }


def _clip(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
