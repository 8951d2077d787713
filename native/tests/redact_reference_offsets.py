"""The reference's plumbing (see ``redact_reference``): which group holds the secret,
markers put in, and a finding in redacted text mapped back to the original's offsets."""

from __future__ import annotations

import re


def _replace(text: str, kept: list[tuple[str, int, int]]) -> str:
    parts = []
    position = 0
    for kind, start, end in kept:
        parts.append(text[position:start])
        parts.append(f"[REDACTED:{kind}]")
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _back(
    kept: list[tuple[str, int, int]], kind: str, start: int, end: int
) -> tuple[str, int, int]:
    """A finding in the redacted text, in the original text's offsets."""
    # Offsets in the redacted text of each marker, and what they stood for.
    markers = []
    offset = 0
    for marker_kind, secret_start, secret_end in kept:
        marker_start = secret_start + offset
        marker_end = marker_start + len(f"[REDACTED:{marker_kind}]")
        markers.append((marker_start, marker_end, secret_start, secret_end))
        offset = marker_end - secret_end

    def back(at: int, is_end: bool) -> int:
        for marker_start, marker_end, secret_start, secret_end in reversed(markers):
            if at >= marker_end:
                return at - (marker_end - secret_end)
            if at > marker_start:
                return secret_end if is_end else secret_start
        return at

    return kind, back(start, False), back(end, True)


def _secret_group(match: re.Match[str]) -> int:
    """The first participating capture group, or 0 for the whole match."""
    for index in range(1, (match.re.groups or 0) + 1):
        if match.start(index) >= 0:
            return index
    return 0


def _generic_group(match: re.Match[str]) -> int:
    for index in (2, 3, 4):
        if match.start(index) >= 0:
            return index
    return 0


def _touches(markers: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(m_start < end and start < m_end for m_start, m_end in markers)
