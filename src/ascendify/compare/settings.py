"""What ``compare dump`` asks the recorder in the program's processes to record (no torch needed)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ascendify.compare.records import SETTINGS
from ascendify.errors import AscendifyError

LEVELS = ("stats", "tensors", "api")
STEP_ON = ("auto", "optimizer", "forward")
DUMP_VARIABLE = "ASCENDIFY_COMPARE_DUMP"  # the dump folder, for every process of the program


@dataclass(frozen=True)
class DumpSettings:
    steps: int = 3  # 0: every step
    level: str = "stats"
    modules: str | None = None  # a regular expression a module path must contain (re.search)
    backward: bool = False
    # A step ends at optimizer.step(), or at the end of a top-level module call; "auto": the
    # latter until an optimizer exists (an inference script never creates one).
    step_on: str = "auto"
    max_elements: int = 4096  # --level tensors: a tensor's sample, evenly strided
    stop_after: int = 0  # end the program once this many steps ended; 0: let it run to its end
    apis: str | None = None  # --level api: a regular expression an operator's name must contain
    nan_check: bool = False  # stop at the first operator whose output holds a NaN or inf
    record: bool = True  # False: the NaN/inf sentinel alone (ascendify run --nan-check)

    def check(self) -> DumpSettings:
        if self.steps < 0:
            raise AscendifyError(f"--steps {self.steps}: give a number of steps, or 0 for all")
        if self.stop_after < 0:
            raise AscendifyError(f"--stop-after {self.stop_after}: give a number of steps")
        if self.max_elements < 1:
            raise AscendifyError(f"--max-elements {self.max_elements}: give at least 1")
        if self.level not in LEVELS or self.step_on not in STEP_ON:
            raise AscendifyError(f"level {self.level!r} / step-on {self.step_on!r} unknown")
        for option, pattern in (("--modules", self.modules), ("--apis", self.apis)):
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as error:
                    raise AscendifyError(f"{option} {pattern!r}: {error}") from None
        if not (self.record or self.nan_check):
            raise AscendifyError("a recorder that records nothing and checks nothing")
        if self.apis is not None and self.level != "api":
            raise AscendifyError("--apis chooses operators: give it with --level api")
        return self

    def write(self, directory: Path) -> None:
        (directory / SETTINGS).write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def read(cls, directory: Path) -> DumpSettings:
        document: dict[str, Any] = json.loads((directory / SETTINGS).read_text(encoding="utf-8"))
        return cls(**document)
