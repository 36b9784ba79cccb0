"""The migration of one framework configuration file (accelerate/argument YAML, DeepSpeed JSON, shell
script): its bytes in, a :data:`~ascendify.migrate._engine.FileResult` out, never raises.

The findings come from :mod:`ascendify.configs`; the rules the run applies and the suppression
comments (``# ascendify: ignore[CFG201]`` on the line, in YAML and shell) decide which are kept. Edits
are text spans of the original, so comments and layout stay byte-identical.
"""

from __future__ import annotations

import codecs
import traceback

from ascendify.configs import config_kind, scan_config
from ascendify.migrate._engine import (
    Changed,
    Failed,
    FileResult,
    Skipped,
    SkipReason,
    Unchanged,
    apply_edits,
)
from ascendify.migrate._registry import registry_for
from ascendify.migrate._settings import Settings
from ascendify.migrate.rules.configs import config_finding
from ascendify.source import SourceText, is_suppressed


def migrate_config(data: bytes, settings: Settings, path: str) -> FileResult:
    """Migrate one configuration file (``path``, relative to SRC, says which kind it is)."""
    kind = config_kind(path, data)
    if kind is None or len(data) > settings.max_bytes:  # that large, it is data
        return Skipped(SkipReason.NO_TRIGGER)
    encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        return Failed(f"cannot decode: not UTF-8 (byte {error.start})")
    active = {rule.code for rule in registry_for(settings).active}
    source = SourceText(text)
    try:
        found = scan_config(kind, text, settings.modes.target.value)
    except Exception as error:  # a scan bug must not stop the run; the file is copied unchanged
        detail = traceback.format_exception_only(type(error), error)[-1].strip()
        return Failed(f"internal error: {detail}")
    findings = [
        config_finding(finding)
        for finding in found
        if finding.code in active
        and not is_suppressed(source, {finding.start_line, finding.end_line}, finding.code)
    ]
    changes = tuple(finding.change() for finding in findings)
    edits = [finding.edit for finding in findings if finding.edit is not None]
    if not edits:
        return Unchanged(changes)
    return Changed(apply_edits(text, edits).encode(encoding), encoding, changes)
