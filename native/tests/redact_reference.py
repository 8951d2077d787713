"""Plain-Python reference for :func:`sf_native.redact`: the same rules, with ``re``.

This is the oracle in the tests and the "plain Python" peer in the benchmark; the
Rust engine (``native/src/redact``) must agree with it on every input. Keep the
two in step: a rule changed here must change there, and the tests will say so.

Semantics shared by both:

* Each rule is a regex; the secret is its first participating capture group, or
  the whole match when it has none. Built-in rules use ASCII classes (``re.ASCII``
  here, ``(?-u:\\b)`` and explicit classes in Rust).
* Candidates whose whole match touches an existing ``[REDACTED:<kind>]`` marker
  are dropped, which makes redaction idempotent.
* Overlaps: earliest start wins, then the longest span, then the rule listed first
  (extra rules before built-in ones, built-in ones in ``SECRET_KINDS`` order).
* Offsets are character offsets into the original text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: ASCII whitespace, spelled out so both regex dialects read it the same way.
_WS = r"\t\n\x0b\x0c\r "

MARKER = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]+\]")
KIND_NAME = re.compile(r"[A-Za-z0-9_.-]+")

#: Values that are obviously not secrets: they survive redaction.
PLACEHOLDER_WORDS = frozenset(
    {
        "changeme",
        "change_me",
        "password",
        "passwd",
        "secret",
        "token",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "example",
        "placeholder",
        "redacted",
        "dummy",
        "test",
        "pass",
    }
)
PLACEHOLDER_PREFIXES = ("your", "example", "placeholder", "insert", "replace", "enter")
PLACEHOLDER_STARTS = ("$", "%(", "{{", "<", "[redacted", "***")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", re.ASCII)

#: Generic assignments: minimum length and entropy (bits per character).
PASSWORD_MIN_LENGTH = 6
PASSWORD_MIN_ENTROPY = 2.0
SECRET_MIN_LENGTH = 8
SECRET_MIN_ENTROPY = 3.0

_KEYWORD = (
    r"(?:(?:api|secret|private|access|auth|signing|encryption|master|client)[_.-]?key"
    r"|secret|token|passw(?:or)?d|passphrase|pwd|credentials?)"
)
_GENERIC = (
    r"(?i)([A-Za-z0-9_.-]*" + _KEYWORD + r"(?:[_.-]?(?:id|value|[0-9]+))?)"
    r"[\"']?[\t ]*(?::=|=>|[:=])[\t ]*"
    r"(?:\"([^\"" + _WS[:-1] + r"]*)\"|'([^'" + _WS[:-1] + r"]*)'"
    r"|([^" + _WS + r"\"',;()\[\]{}<>]+))"
)


def shannon_entropy(value: str) -> float:
    """Bits per character; summed in first-occurrence order, like the Rust side."""
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = 0.0
    length = len(value)
    for count in counts.values():
        share = count / length
        total -= share * math.log2(share)
    return total


def is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        not value
        or lowered in PLACEHOLDER_WORDS
        or lowered.startswith(PLACEHOLDER_PREFIXES)
        or lowered.startswith(PLACEHOLDER_STARTS)
        or len(set(value)) == 1
    )


Check = Callable[[str, "re.Match[str]", int], bool]


def _always(text: str, match: re.Match[str], group: int) -> bool:
    return True


def _not_placeholder(text: str, match: re.Match[str], group: int) -> bool:
    return not is_placeholder(match.group(group))


def _has_digit(text: str, match: re.Match[str], group: int) -> bool:
    return any(char.isdigit() for char in match.group(group)[3:])


def _aws_secret(text: str, match: re.Match[str], group: int) -> bool:
    end = match.end(group)
    if end >= len(text):
        return True
    follow = text[end]
    return not (follow.isascii() and (follow.isalnum() or follow in "/+="))


def _generic(text: str, match: re.Match[str], group: int) -> bool:
    value = match.group(group)
    key = match.group(1).lower()
    if is_placeholder(value):
        return False
    if group == 4:  # a bare (unquoted) value: code, unless it looks like data
        follow = text[match.end() : match.end() + 1]
        if follow in ("(", "["):
            return False
        if IDENTIFIER.fullmatch(value) and not any(char.isdigit() for char in value):
            return False
    if "passw" in key or "pwd" in key or "passphrase" in key:
        return len(value) >= PASSWORD_MIN_LENGTH and shannon_entropy(value) >= PASSWORD_MIN_ENTROPY
    return len(value) >= SECRET_MIN_LENGTH and shannon_entropy(value) >= SECRET_MIN_ENTROPY


@dataclass(frozen=True)
class Rule:
    kind: str
    regex: re.Pattern[str]
    check: Check = _always
    #: Lower-case strings one of which every match contains (the Rust prefilter).
    keywords: tuple[str, ...] = ()


def _rule(kind: str, pattern: str, check: Check = _always, keywords: tuple[str, ...] = ()) -> Rule:
    return Rule(kind, re.compile(pattern, re.ASCII), check, keywords)


RULES: tuple[Rule, ...] = (
    _rule(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\\" + _WS + r"]*)",
        keywords=("private key",),
    ),
    _rule(
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
        keywords=("akia", "asia", "abia", "acca"),
    ),
    _rule(
        "aws_secret_access_key",
        r"(?i)aws[_-]?secret[_-]?(?:access[_-]?)?key[\"']?[\t ]*(?::=|=>|[:=])[\t ]*[\"']?"
        r"([A-Za-z0-9/+=]{40})",
        _aws_secret,
        keywords=("secret",),
    ),
    _rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "slack_token",
        r"\b(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}",
        keywords=("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-"),
    ),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        keywords=("hooks.slack.com",),
    ),
    _rule("anthropic_api_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", keywords=("sk-ant-",)),
    _rule("openai_api_key", r"\bsk-[A-Za-z0-9_-]{20,}", _has_digit, keywords=("sk-",)),
    _rule(
        "stripe_key",
        r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
        keywords=("k_live_", "k_test_"),
    ),
    _rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        keywords=("eyj",),
    ),
    _rule(
        "bearer_token",
        r"(?i)\bauthorization[\"']?[\t ]*[:=][\t ]*[\"']?(?:bearer|basic|token)[\t ]+"
        r"([A-Za-z0-9._~+/=-]{8,})",
        _not_placeholder,
        keywords=("authorization",),
    ),
    _rule(
        "url_password",
        r"(?i)\b[a-z][a-z0-9+.-]*://[^" + _WS + r"/:@\"'<>]+:([^" + _WS + r"/@\"'<>]+)@",
        _not_placeholder,
        keywords=("://",),
    ),
    _rule(
        "generic_secret",
        _GENERIC,
        _generic,
        keywords=("key", "secret", "token", "passw", "passphrase", "pwd", "credential"),
    ),
)

SECRET_KINDS: tuple[str, ...] = tuple(rule.kind for rule in RULES)


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


def _candidates(text: str, rules: Sequence[Rule]) -> list[tuple[int, int, int, str]]:
    markers = [(m.start(), m.end()) for m in MARKER.finditer(text)]
    lowered = text.lower()
    found = []
    for priority, rule in enumerate(rules):
        if rule.keywords and not any(word in lowered for word in rule.keywords):
            continue
        for match in rule.regex.finditer(text):
            group = _generic_group(match) if rule.kind == "generic_secret" else _secret_group(match)
            start, end = match.span(group)
            if start == end or _touches(markers, match.start(), match.end()):
                continue
            if rule.check(text, match, group):
                found.append((start, -end, priority, rule.kind))
    return found


def compile_extra_rules(extra_rules: Sequence[tuple[str, str]] | None) -> list[Rule]:
    rules = []
    for kind, pattern in extra_rules or ():
        if not KIND_NAME.fullmatch(kind):
            raise ValueError(f"bad secret kind {kind!r}: use letters, digits, '_', '.', '-'")
        rules.append(Rule(kind, re.compile(pattern)))
    return rules


def redact(
    text: str, extra_rules: Sequence[tuple[str, str]] | None = None
) -> tuple[str, list[tuple[str, int, int]]]:
    """``(redacted text, [(kind, start, end), ...])`` — see :func:`sf_native.redact`.

    Redacting is repeated on the redacted text until it finds nothing new; every
    later finding is mapped back to the original text (one that covers earlier ones
    replaces them), which is then redacted once with all of them.
    """
    rules = [*compile_extra_rules(extra_rules), *RULES]
    kept = _redact_once(text, rules)
    again = kept
    for _ in range(8):
        if not again:
            break
        again = _redact_once(_replace(text, kept), rules)
        later = [_back(kept, kind, start, end) for kind, start, end in again]
        inside = {k for k in kept for g in later if g[1] <= k[1] and k[2] <= g[2]}
        kept = sorted([k for k in kept if k not in inside] + later, key=lambda f: f[1])
    return _replace(text, kept), kept


def _redact_once(text: str, rules: list[Rule]) -> list[tuple[str, int, int]]:
    kept: list[tuple[str, int, int]] = []
    last_end = 0
    for start, negative_end, _, kind in sorted(_candidates(text, rules)):
        if start >= last_end:
            kept.append((kind, start, -negative_end))
            last_end = -negative_end
    return kept


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
