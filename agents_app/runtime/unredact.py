"""Redaction markers in what the agent writes: restored from the file, or refused.

The model sees secrets as ``[REDACTED:<kind>]`` markers (``gate.redaction``). When it
writes a file back, or edits around a secret, a marker in ``write_file``'s content or
``edit_file``'s search/replace stands for the secret the file held: it is put back when
the file's own content says unambiguously which secret that is (one secret of that kind
in the file). Otherwise the call is refused with a tool error; a marker is never
written into a file.
"""

from __future__ import annotations

import re

import sf_native

MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+\]")


class MarkerUnresolved(ValueError):
    """A redaction marker that cannot be turned back into the file's secret."""


def restore_markers(text: str, original: str | None, path: str) -> str:
    """``text`` with each marker replaced by the secret it hides in ``original``."""
    if not MARKER.search(text):
        return text
    secrets: dict[str, set[str]] = {}
    if original:
        for finding in sf_native.redact(original).findings:
            marker = f"[REDACTED:{finding.kind}]"
            secrets.setdefault(marker, set()).add(original[finding.start : finding.end])

    def secret(match: re.Match[str]) -> str:
        values = secrets.get(match.group(0), set())
        if len(values) == 1:
            return next(iter(values))
        if not values:
            raise MarkerUnresolved(
                f"{path}: {match.group(0)} is a redaction marker, not a value, and the file "
                "holds no such secret to restore; nothing was written. Leave the secret's "
                "line unchanged (edit other lines with edit_file) or ask the person"
            )
        raise MarkerUnresolved(
            f"{path}: {match.group(0)} stands for {len(values)} different secrets in this "
            "file; nothing was written. Edit around them with edit_file, with search text "
            "that does not include the marker"
        )

    return MARKER.sub(secret, text)
