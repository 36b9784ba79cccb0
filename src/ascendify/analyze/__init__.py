"""Know before you spend NPU hours: what in a project, or in a real run of it, the NPU cannot do as written.

Static analysis reads the sources (:mod:`.static`), the trace runs the script on this machine and records every
operator it executes (:mod:`.trace`). Both produce :class:`~ascendify.analyze.findings.Finding` rows, written by
one set of report writers (:mod:`.report`).
"""
