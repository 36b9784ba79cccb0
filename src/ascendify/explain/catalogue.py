"""The catalogue of failure signatures (``signatures.json``) and the one function that matches a
log line against it.

A line is matched only when it holds an anchor: a word starting with ``E`` of
:data:`ANCHOR` (``Error``, ``ERROR``, ``Exception``, ``EI0002``, glog's ``E1219 03:`` error lines)
or one of :data:`ANCHOR_WORDS` (``error``...). The reader finds them in a block of bytes with
:data:`GATES`, one RE2 pattern each: RE2 skips to a literal prefix with ``memchr`` or its shift
DFA, several times faster than ``re`` or ``bytes.find`` on log text, and no anchor looks past its
own end, so a line cut short holds an anchor only where the whole line does. It decodes nothing
else. Then, on that one line: the codes it quotes (``error code is 507035``, ``EI0002``,
``ERR00100``, an HCCL result code), the literal phrases, the patterns (whose named groups, such as the module an
import failed on or the peer rank a timeout waited for, fill the entry's texts), and a Python
exception at the start of the line. Every regular expression here is a short anchored phrase without nested repetition, so its
cost is linear in the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import re2  # type: ignore[import-untyped]

# What every matchable line holds (the tests check it of every fixture line).
ANCHOR = rb"E(?:rror|RR|xception|[A-Z][0-9][0-9A-Z]{3}|\d{3,4} \d\d:|\x20\w{1,40}\.cpp:\d)"
# "nan-check:", not "--nan-check:": RE2 skips to a rare first byte, and "-" is in every date.
ANCHOR_WORDS = (
    b"error", b"out of memory", b"NumPy 1.x", b"NCCL WARN", b"nan-check:",
    # lines that name their cause without the word "error" (a loader's, a compiler's, HCCL's),
    # each a literal whose first byte is rare in log text, so its pass skips fast
    b"cannot open shared object", b"undefined symbol", b"GLIBC_", b"Unsupported soc",
    b"b overflow", b"HcclGroupEnd", b"dcmi mod", b"Duplicate GPU",
    b"your system is too old",  # the NVIDIA driver line, which torch prints as a UserWarning
    b"bin package does not match",  # a kernel package built for another SoC, printed without a level
)  # fmt: skip
# One search per anchor: an alternation of them all runs RE2's DFA over every byte, 10 times
# slower than the literal prefix skips of the separate patterns.
GATES = tuple(re2.compile(pattern) for pattern in (ANCHOR, *map(re.escape, ANCHOR_WORDS)))

LAYERS = {
    "acl": "CANN runtime/ACL",
    "hccl": "HCCL",
    "torch_npu": "torch_npu",
    "cann_env": "CANN environment",
    "cuda": "CUDA/NCCL",
    "python": "Python",
}
ROLES = ("cause", "echo")

# "error code is 507035", "runtime result = 507035", "ErrCode=507035", and the forms other
# programs print: "with ERROR 561103", "errno:561103", "ret 107000", "ret -107000".
_ACL_CODE = re.compile(
    r"(?:[cC]ode|result|failed|ERROR|errno|\bret)(?: is)?\s?[:=]?\s?-?(\d{6})(?!\d)"
)
_ECODE = re.compile(r"\b(E[A-Z0-9][0-9A-Z]\d{3})\b")  # EI0002, EZ9903, E89999
_ERR = re.compile(r"\b(ERR\d{5})\b")
_HCCL_CODE = re.compile(
    r"(?:HCCL function error|function error: Hccl\w{1,40}).{0,300}?error code is (\d{1,4})\b"
)
# A traceback's last line, after the prefixes launchers and servers put before a rank's output:
# ``[rank1]: ``, docker compose's ``vllm-1  | ``, vLLM's ``(VllmWorker rank=1 pid=7) ERROR 09-03
# 03:02:37 [executor.py:522] `` (older ones without the brackets).
_EXCEPTION = re.compile(
    r"^(?:\[rank ?\d{1,5}\]: ?)?(?:[\w.-]{1,64} {1,4}\| )?(?:\([^()]{1,80}\) ){0,3}"
    r"(?:(?:ERROR|WARNING|INFO|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})? \[?[\w.]{1,80}:\d{1,6}\] )?"
    r"((?:[A-Za-z_]\w{0,60}\.){0,6}[A-Za-z_]\w{0,60}(?:Error|Exception))(?::|$)"
)


@dataclass(frozen=True)
class Signature:
    id: str
    layer: str
    role: str  # "cause": the rank failed by itself; "echo": it failed because another one did
    meaning: str
    causes: tuple[str, ...]
    fix: str
    versions: str
    source: str
    also: tuple[str, ...] = ()
    generic: bool = False  # a wrapper line: used only when nothing more specific matched
    wrapper: bool = False  # re-raises another process's failure: not even a Python exception
    detail: bool = False  # explains the code of the line above it (the cause under a wrapper)
    codes: tuple[str, ...] = ()
    ecodes: tuple[str, ...] = ()
    errs: tuple[str, ...] = ()
    hccl_codes: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()  # regular expressions; their named groups fill {name} in texts
    signals: tuple[str, ...] = ()
    exception: bool = False
    order: int = 0  # position in the catalogue: earlier entries win ties

    @property
    def layer_name(self) -> str:
        return LAYERS[self.layer]

    def fields(self, line: str) -> dict[str, str]:
        """What the line tells of this failure: the named groups of the first pattern it holds
        (``{"module": "vllm"}``, ``{"peer": "0"}``)."""
        for pattern in self.patterns:
            match = _compiled(pattern).search(line)
            if match is not None:
                return {k: v for k, v in match.groupdict().items() if v is not None}
        return {}


@dataclass(frozen=True)
class VersionRule:
    id: str
    when: dict[str, tuple[str, str]]  # package -> (op, version)
    message: str
    fix: str
    signature: str
    source: str


class Catalogue:
    """The signatures, indexed by the keys a line can quote, and the known failing versions."""

    def __init__(
        self, signatures: tuple[Signature, ...], version_rules: tuple[VersionRule, ...]
    ) -> None:
        self.signatures = signatures
        self.version_rules = version_rules
        self._index: dict[str, dict[str, Signature]] = {
            "code": {}, "ecode": {}, "err": {}, "hccl": {}, "signal": {}
        }  # fmt: skip
        for signature in signatures:
            for kind, keys in (
                ("code", signature.codes), ("ecode", signature.ecodes), ("err", signature.errs),
                ("hccl", signature.hccl_codes), ("signal", signature.signals),
            ):  # fmt: skip
                for key in keys:
                    self._index[kind][key] = signature
        self._phrases = tuple((phrase, s) for s in signatures for phrase in s.phrases)
        self._patterns = tuple((_compiled(p), s) for s in signatures for p in s.patterns)
        self._exception = next((s for s in signatures if s.exception), None)

    def by_id(self, signature_id: str) -> Signature:
        return next(s for s in self.signatures if s.id == signature_id)

    def for_signal(self, name: str) -> Signature | None:
        return self._index["signal"].get(name)

    def match(self, line: str) -> Signature | None:
        """The most specific signature of ``line``, or None."""
        found = self.matches(line)
        return min(found, key=_rank) if found else None

    def matches(self, line: str) -> list[Signature]:
        """Every signature ``line`` matches."""
        index = self._index
        found = [index["code"][code] for code in _ACL_CODE.findall(line) if code in index["code"]]
        for pattern, kind in ((_ECODE, "ecode"), (_ERR, "err"), (_HCCL_CODE, "hccl")):
            found += [index[kind][key] for key in pattern.findall(line) if key in index[kind]]
        found += [signature for phrase, signature in self._phrases if phrase in line]
        found += [signature for pattern, signature in self._patterns if pattern.search(line)]
        wrapped = any(signature.wrapper for signature in found)  # the wrapper, not its exception
        if self._exception is not None and not wrapped and _EXCEPTION.match(line.lstrip()):
            found.append(self._exception)
        return found


def _rank(signature: Signature) -> tuple[bool, bool, bool, int]:
    """Specific before generic, a cause before an echo, the detail under a code before the code,
    then the catalogue's order."""
    return signature.generic, signature.role != "cause", not signature.detail, signature.order


_FIELD = re.compile(r"\{(\w+)\}")


def filled(text: str, fields: dict[str, str]) -> str:
    """``text`` with each ``{name}`` the line told replaced by its value (others are kept)."""
    return _FIELD.sub(lambda m: fields.get(m.group(1), m.group(0)), text) if fields else text


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def has_anchor(line: bytes) -> bool:
    return any(gate.search(line) is not None for gate in GATES)


def exception_name(line: str) -> str | None:
    """``ValueError`` for a traceback's last line ``ValueError: boom``."""
    match = _EXCEPTION.match(line.lstrip())
    return match.group(1) if match else None


@lru_cache(maxsize=1)
def load() -> Catalogue:
    """The catalogue shipped with ascendify (parsed once per process)."""
    text = resources.files("ascendify.explain").joinpath("signatures.json").read_text("utf-8")
    return parse(json.loads(text))  # JSON: parsed in C, cheap at the end of a failed run


def parse(data: dict[str, Any]) -> Catalogue:
    signatures = tuple(_signature(entry, order) for order, entry in enumerate(data["signatures"]))
    rules = tuple(
        VersionRule(
            id=rule["id"],
            when={name: (str(pair[0]), str(pair[1])) for name, pair in rule["when"].items()},
            message=rule["message"],
            fix=rule["fix"],
            signature=rule["signature"],
            source=rule["source"],
        )
        for rule in data.get("version_rules", ())
    )
    return Catalogue(signatures, rules)


def _signature(entry: dict[str, Any], order: int) -> Signature:
    match = entry["match"]

    def keys(kind: str) -> tuple[str, ...]:
        return tuple(str(item[kind]) for item in match if kind in item)

    if entry["layer"] not in LAYERS or entry["role"] not in ROLES:
        raise ValueError(f"signature {entry['id']}: unknown layer or role")
    return Signature(
        id=entry["id"],
        layer=entry["layer"],
        role=entry["role"],
        meaning=entry["meaning"],
        causes=tuple(entry["causes"]),
        fix=entry["fix"],
        versions=str(entry["versions"]),
        source=entry["source"],
        also=tuple(entry.get("also", ())),
        generic=bool(entry.get("generic", False)),
        wrapper=bool(entry.get("wrapper", False)),
        detail=bool(entry.get("detail", False)),
        codes=keys("code"),
        ecodes=keys("ecode"),
        errs=keys("err"),
        hccl_codes=keys("hccl"),
        phrases=keys("phrase"),
        patterns=keys("pattern"),
        signals=keys("signal"),
        exception=any("exception" in item for item in match),
        order=order,
    )
