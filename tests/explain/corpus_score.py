"""How ``ascendify explain`` does on the corpus of real failures (tests/explain/corpus/README.md).

``python -m tests.explain.corpus_score [dev|test] [-v]`` prints the rates per layer; the tests use
:func:`judge` case by case (dev) and :func:`rates` over the held-out split (test).

A case is judged as a user would: the verdict's root rank is the rank the thread says failed first
(when the log shows ranks), or, where every rank only waited, the rank their timeouts name as the
one that never arrived; a rank that only waited is never blamed (named as failing by itself); the cause is right when the verdict's entry
(its id and meaning) or the line it chose names one of the case's cause words; the fix is useful when
the fix shown names one of the case's fix words. A verdict from a generic entry (a wrapper line,
any Python exception) or from no entry at all is right about the cause only for plain Python
failures, where the innermost exception is the cause: elsewhere it says what failed, not why.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.explain import explain_paths
from ascendify.explain.analysis import Explanation, cause_line

CORPUS = Path(__file__).parent / "corpus"
ASCEND_LAYERS = frozenset({"acl", "hccl", "torch_npu", "cann_env"})


@dataclass(frozen=True)
class Judgement:
    case: str
    layer: str
    root_ok: bool
    cause_ok: bool
    fix_ok: bool
    waiting_blamed: bool
    said: str  # the verdict's one line, to read a miss by

    @property
    def right(self) -> bool:
        return self.root_ok and self.cause_ok and not self.waiting_blamed


def cases(split: str) -> list[Path]:
    return sorted(p.parent for p in (CORPUS / split).glob("*/case.json"))


def judge(case_dir: Path) -> Judgement:
    case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
    try:
        explanation = explain_paths([case_dir])
    except AscendifyError as error:
        return Judgement(case_dir.name, case["layer"], False, False, False, False, str(error))
    root = explanation.root
    if root is None:
        return _judge_unmatched(case_dir.name, case, explanation)
    expected = case.get("root_rank")
    root_ok = expected is None or expected in (root.who, explanation.awaited)
    blamed = root.who in case["waiting_ranks"] and not explanation.all_echo
    cause_ok = root_ok and _names_the_cause(explanation, case)
    fix_ok = _any_word(_fix_text(explanation), case["fix_keywords"])
    said = cause_line(explanation) or f"{root.who}: {root.headline.signature.id}"
    return Judgement(case_dir.name, case["layer"], root_ok, cause_ok, fix_ok, blamed, said)


def _judge_unmatched(name: str, case: dict[str, Any], explanation: Explanation) -> Judgement:
    """No catalogue entry matched: the verdict names the failing rank and its innermost error,
    which is the cause only of a plain Python failure; it has no fix to judge."""
    other = explanation.unmatched
    if other is None:
        return Judgement(name, case["layer"], False, False, False, False, "nothing found")
    expected = case.get("root_rank")
    root_ok = expected is None or other.who == expected
    told = f"{other.exception or ''} {other.error or ''}"
    cause_ok = root_ok and case["layer"] == "python" and _any_word(told, case["cause_keywords"])
    said = f"{other.who}: no catalogue entry matched: {other.headline}"
    blamed = other.who in case["waiting_ranks"]
    return Judgement(name, case["layer"], root_ok, cause_ok, False, blamed, said)


def _names_the_cause(explanation: Explanation, case: dict[str, object]) -> bool:
    assert explanation.root is not None
    headline = explanation.root.headline
    signature = headline.signature
    if case["layer"] != "python" and signature.generic:
        return False  # a wrapper line or a bare exception says what failed, not why
    told = " ".join((signature.id, signature.meaning, headline.text, headline.exception or ""))
    return _any_word(told, case["cause_keywords"])  # type: ignore[arg-type]


def _fix_text(explanation: Explanation) -> str:
    assert explanation.root is not None
    headline = explanation.root.headline
    advice = headline.oom.advice() if headline.oom else ""
    return f"{headline.fix} {advice}"


def _any_word(text: str, words: list[str]) -> bool:
    folded = text.casefold()
    return any(word.casefold() in folded for word in words)


def rates(judgements: list[Judgement]) -> dict[str, dict[str, float]]:
    """Per layer, "ascend" and "all": the share right, with a useful fix, and how many."""
    groups: dict[str, list[Judgement]] = defaultdict(list)
    for j in judgements:
        groups[j.layer].append(j)
        groups["all"].append(j)
        if j.layer in ASCEND_LAYERS:
            groups["ascend"].append(j)
    return {
        name: {
            "cases": len(group),
            "right": sum(j.right for j in group) / len(group),
            "fix": sum(j.fix_ok for j in group) / len(group),
            "waiting_blamed": sum(j.waiting_blamed for j in group),
        }
        for name, group in groups.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split", choices=("dev", "test"), nargs="?", default="dev")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every case")
    parser.add_argument(
        "--only", type=Path, metavar="COLLECTION",
        help="only the cases of a collection just taken in (a folder of case folders), to read "
        "them before the catalogue changes",
    )  # fmt: skip
    args = parser.parse_args()
    chosen = cases(args.split)
    if args.only is not None:
        wanted = {case.name for case in args.only.iterdir() if case.is_dir()}
        chosen = [case for case in chosen if case.name in wanted]
    judgements = [judge(case) for case in chosen]
    if args.verbose:
        for j in judgements:
            mark = "ok " if j.right else "-- "
            print(f"{mark}{j.case:40} {j.layer:10} fix={'y' if j.fix_ok else 'n'} {j.said[:150]}")
    for name, figures in sorted(rates(judgements).items()):
        print(
            f"{name:10} {figures['cases']:4.0f} cases  right {figures['right']:6.1%}  "
            f"useful fix {figures['fix']:6.1%}  waiting rank blamed {figures['waiting_blamed']:.0f}"
        )


if __name__ == "__main__":
    main()
