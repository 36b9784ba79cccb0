"""Take collected failure cases into the corpus and split them, by thread, into dev and test.

Usage: ``python scripts/split_failure_corpus.py INCOMING [INCOMING ...]``

Each case is a folder holding the logs as a public thread posted them and a ``case.json`` (the
thread's address, the layer, the rank that failed first, the ranks that only waited, the cause and
fix the thread settled on, and the words a right diagnosis must name: tests/explain/corpus/README.md).

The split is made before anyone reads the cases to tune the catalogue, and is blind to their
content: a thread goes to ``test`` when the SHA-256 of its address is a multiple of three, so every
case of one thread lands in the same split and cases taken in later never move one already split. The result is written to
``tests/explain/corpus/{dev,test}/<id>/`` with ``index.json``; a case already in the corpus keeps
its split (the script refuses to move one).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "explain" / "corpus"
LAYERS = ("acl", "hccl", "torch_npu", "cann_env", "cuda", "nccl", "python")
REQUIRED = {
    "id": str, "source": str, "layer": str, "cause": str, "cause_keywords": list,
    "fix": str, "fix_keywords": list, "waiting_ranks": list, "evidence": str,
}  # fmt: skip
TEST_EVERY = 3
_THREAD = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(?:issues|pull|discussions)/\d+")


def problems(case: dict[str, object]) -> list[str]:
    """What keeps a case out of the corpus (empty when it is usable)."""
    found = [
        f"{key} missing or not a {kind.__name__}"
        for key, kind in REQUIRED.items()
        if not isinstance(case.get(key), kind)
    ]
    if found:
        return found
    if case["layer"] not in LAYERS:
        found.append(f"layer {case['layer']!r} is not one of {', '.join(LAYERS)}")
    if not _THREAD.match(str(case["source"])):
        found.append(f"source {case['source']!r} is not a public thread's address")
    root = case.get("root_rank")
    if root is not None and not isinstance(root, int):
        found.append("root_rank is neither null nor a rank")
    for key in ("cause_keywords", "fix_keywords"):
        words = case[key]
        if not (isinstance(words, list) and words and all(isinstance(w, str) and w for w in words)):
            found.append(f"{key} must be a non-empty list of words")
    return found


def thread_of(case: dict[str, object]) -> str:
    return _THREAD.match(str(case["source"])).group(0).lower()  # type: ignore[union-attr]


def split(thread: str) -> str:
    """ "test" for a third of the threads, chosen by the SHA-256 of their address alone, so a case
    added later never moves one already split."""
    return (
        "test" if int(hashlib.sha256(thread.encode()).hexdigest(), 16) % TEST_EVERY == 0 else "dev"
    )


def _index() -> list[dict[str, str]]:
    index = CORPUS / "index.json"
    return json.loads(index.read_text())["cases"] if index.is_file() else []


def existing_splits() -> dict[str, str]:
    return {entry["thread"]: entry["split"] for entry in _index()}


def main(incoming: list[Path]) -> int:
    cases: dict[str, tuple[Path, dict[str, object]]] = {}
    for folder in incoming:
        for case_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            try:
                case = json.loads((case_dir / "case.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                print(f"skipped {case_dir.name}: case.json unreadable ({error})", file=sys.stderr)
                continue
            wrong = problems(case)
            logs = [p for p in case_dir.rglob("*") if p.is_file() and p.name != "case.json"]
            if not logs:
                wrong.append("no log file")
            if wrong:
                print(f"skipped {case_dir.name}: {'; '.join(wrong)}", file=sys.stderr)
                continue
            cases[case_dir.name] = (case_dir, case)
    kept = existing_splits()
    taken = {entry["thread"]: entry["id"] for entry in _index()}
    for name, (_, case) in list(cases.items()):
        owner = taken.get(thread_of(case))
        if owner is not None and owner != name:  # the same thread collected twice, under two ids
            print(f"skipped {name}: its thread is already the corpus's {owner}", file=sys.stderr)
            del cases[name]
    chosen = {thread_of(case): split(thread_of(case)) for _, case in cases.values()}
    for thread, split_name in kept.items():
        if chosen.get(thread, split_name) != split_name:
            raise SystemExit(f"{thread} is in {split_name} already and would move")
    for name, (case_dir, case) in sorted(cases.items()):
        target = CORPUS / chosen[thread_of(case)] / name
        if target.exists():  # a case once taken in is never replaced by a later collection
            print(f"skipped {name}: the corpus holds a case of that id already", file=sys.stderr)
            continue
        shutil.copytree(case_dir, target)
    index = []
    for split_name in ("dev", "test"):
        for case_dir in sorted((CORPUS / split_name).glob("*/case.json")):
            case = json.loads(case_dir.read_text(encoding="utf-8"))
            index.append(
                {
                    "id": case_dir.parent.name,
                    "split": split_name,
                    "thread": thread_of(case),
                    "layer": case["layer"],
                    "source": case["source"],
                }
            )
    (CORPUS / "index.json").write_text(json.dumps({"cases": index}, indent=1) + "\n")
    counts = {s: sum(1 for e in index if e["split"] == s) for s in ("dev", "test")}
    threads = {s: len({e["thread"] for e in index if e["split"] == s}) for s in ("dev", "test")}
    print(f"dev: {counts['dev']} cases ({threads['dev']} threads); "
          f"test: {counts['test']} cases ({threads['test']} threads)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(arg) for arg in sys.argv[1:]]))
