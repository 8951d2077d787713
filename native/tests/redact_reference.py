"""Plain-Python reference for :func:`sf_native.redact`: the same rules, with ``re``.

This is the oracle in the tests and the "plain Python" peer in the benchmark; the
Rust engine (``native/src/redact``) must agree with it on every input. Keep the
two in step: a rule changed here must change there, and the tests will say so.

Semantics shared by both:

* Each rule is a regex; the secret is its first participating capture group, or
  the whole match when it has none. Built-in rules use ASCII classes (``re.ASCII``
  here, ``(?-u:\\b)`` and explicit classes in Rust).
* A candidate whose secret is one of ``DOCUMENTED_EXAMPLES`` is dropped.
* A rule without keywords searches the whole text; a kind may have several rules
  (``SECRET_KINDS`` lists each once, at its first rule).
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

from redact_reference_offsets import _back, _generic_group, _replace, _secret_group, _touches

#: ASCII whitespace, spelled out so both regex dialects read it the same way.
_WS = r"\t\n\x0b\x0c\r "

#: Characters that do not show; ignored when matching.
INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")

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


def _assignment(name: str, *, bytes_prefix: bool, bare: str) -> str:
    """``(name)["']? = `` then a double-quoted, single-quoted (groups 2, 3) or bare (4)
    value; ``bytes_prefix`` allows Python's ``b'…'``; ``bare``: what a bare value may
    not contain."""
    b = "b?" if bytes_prefix else ""
    return (
        r"(" + name + r")[\"']?[\t ]*(?::=|=>|[:=])[\t ]*"
        r"(?:" + b + r"\"([^\"" + _WS[:-1] + r"]*)\"|" + b + r"'([^'" + _WS[:-1] + r"]*)'"
        r"|([^" + _WS + r"\"'" + bare + r"]+))"
    )


_GENERIC = _assignment(
    r"(?i:[A-Za-z0-9_.-]*" + _KEYWORD + r"(?:[_.-]?(?:id|value|[0-9]+))?)",
    bytes_prefix=False,
    bare=r",;()\[\]{}<>",
)
# A Django/Flask secret key may hold ``(``, ``)`` and ``#``, never quotes or brackets.
_SECRET_KEY = _assignment(
    r"(?i:secret[_.-]?key(?:[_.-]?(?:base|[0-9]+))?)",
    bytes_prefix=True,
    bare=r",;\[\]{}<>`",
)

#: Well-known fakes from vendors' documentation (AWS's example key pairs, the Azure
#: storage emulator's published account key): text quoting them stays readable.
DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAIOSFODNN7EXAMPLE",
        "AKIAI44QH8DHBEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    }
)

#: The least entropy of a bare AWS secret: 40 random base64 characters have 4.8 bits a
#: character (1 in 2,000 falls under 4.3); camel-case names and paths have ~4.0-4.2.
BARE_AWS_MIN_ENTROPY = 4.3


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


def _sticks(char: str, more: str) -> bool:
    """Whether ``char`` continues a token: an ASCII letter or digit, or one of ``more``."""
    return char.isascii() and (char.isalnum() or char in more)


def _exact(more: str) -> Check:
    """A fixed-length token is not the start of a longer run."""

    def check(text: str, match: re.Match[str], group: int) -> bool:
        follow = text[match.end(group) : match.end(group) + 1]
        return not (follow and _sticks(follow, more))

    return check


def _random(tenths: int) -> Check:
    """A random token standing alone, with a digit or an upper-case letter."""

    def check(text: str, match: re.Match[str], group: int) -> bool:
        value = match.group(group)
        follow = text[match.end(group) : match.end(group) + 1]
        return (
            not (follow and _sticks(follow, "_-"))
            and any(char.isdigit() or "A" <= char <= "Z" for char in value)
            and shannon_entropy(value) >= tenths / 10
        )

    return check


def _wrapped(length: int) -> Check:
    """A token wrapped over two lines: ``length`` letters and digits after its prefix."""

    def check(text: str, match: re.Match[str], group: int) -> bool:
        body = match.group(group)[4:]
        follow = text[match.end(group) : match.end(group) + 1]
        return sum(1 for char in body if char.isascii() and char.isalnum()) == length and not (
            follow and follow.isascii() and follow.isalnum()
        )

    return check


def _bare_aws_secret(text: str, match: re.Match[str], group: int) -> bool:
    """A 40-character base64 token standing alone (not part of a longer run, a path or
    a dotted name), with upper and lower case and a digit, not hex only (a git SHA is
    40 hex digits), at most three ``/`` (paths have more), and random-looking."""
    value = match.group(group)
    start, end = match.span(group)
    before = text[start - 1] if start else ""
    if before and _sticks(before, "/+._-"):
        return False
    after = text[end : end + 2]
    if after[:1] == "." and after[1:] and _sticks(after[1], "_"):
        return False
    if after[:1] and _sticks(after[0], "/+=_-"):
        return False
    return (
        not all(char in "0123456789abcdefABCDEF" for char in value)
        and any("A" <= char <= "Z" for char in value)
        and any("a" <= char <= "z" for char in value)
        and any("0" <= char <= "9" for char in value)
        and value.count("/") <= 3
        and shannon_entropy(value) >= BARE_AWS_MIN_ENTROPY
    )


def _looks_like_code(text: str, match: re.Match[str], value: str) -> bool:
    """A dotted name without digits, a name called or indexed (``get_token()``,
    ``os.environ["KEY"]``, ``secrets.token_hex(32)``)."""
    if text[match.end() : match.end() + 1] in ("(", "["):
        return True
    if IDENTIFIER.fullmatch(value) and not any(char.isdigit() for char in value):
        return True
    name, paren, rest = value.partition("(")
    if not paren:
        return False
    return bool(IDENTIFIER.fullmatch(name)) and (
        not rest or (rest.endswith(")") and "(" not in rest[:-1] and ")" not in rest[:-1])
    )


def _keyed(password_like: bool) -> Check:
    """``name = value``: placeholders and (bare values) code survive; the value needs a
    password's length and entropy under a password-ish name (or any ``SECRET_KEY``,
    ``password_like``), a secret's otherwise."""

    def check(text: str, match: re.Match[str], group: int) -> bool:
        value = match.group(group)
        key = match.group(1).lower()
        if is_placeholder(value) or (group == 4 and _looks_like_code(text, match, value)):
            return False
        if password_like or "passw" in key or "pwd" in key or "passphrase" in key:
            return (
                len(value) >= PASSWORD_MIN_LENGTH and shannon_entropy(value) >= PASSWORD_MIN_ENTROPY
            )
        return len(value) >= SECRET_MIN_LENGTH and shannon_entropy(value) >= SECRET_MIN_ENTROPY

    return check


_generic = _keyed(password_like=False)
_secret_key = _keyed(password_like=True)


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
    _rule("sf_api_token", r"\bsf_[A-Za-z0-9_-]{43}", _random(40), keywords=("sf_",)),
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
        _exact("/+="),
        keywords=("secret",),
    ),
    _rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _rule(
        "github_token",
        r"\bgh[pousr]_[A-Za-z0-9]{1,35}\r?\n[\t >#*/]*[A-Za-z0-9]{1,35}",
        _wrapped(36),
        keywords=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _rule("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9+/=]{24,}", keywords=("whsec_",)),
    _rule(
        "azure_sas_signature",
        r"(?i:[?&;]sig=)([A-Za-z0-9%+/]{30,}(?:=|%3D){0,2})",
        _not_placeholder,
        keywords=("sig=",),
    ),
    _rule(
        "npm_auth",
        r"\b_(?:auth|authToken|password)[\t ]*=[\t ]*[\"']?([A-Za-z0-9+/=._~-]{8,})",
        _not_placeholder,
        keywords=("_auth", "_password"),
    ),
    _rule(
        "docker_auth",
        r'"(?:auth|identitytoken|registrytoken)"[\t ]*:[\t ]*"([A-Za-z0-9+/=]{8,})"',
        _not_placeholder,
        keywords=('"auth"', '"identitytoken"', '"registrytoken"'),
    ),
    _rule(
        "kube_client_key",
        r"\bclient-key-data[\"']?[\t ]*:[\t ]*[\"']?([A-Za-z0-9+/=]{16,})",
        _not_placeholder,
        keywords=("client-key-data",),
    ),
    _rule(
        "gitlab_token",
        r"\bgl(?:pat|ptt|dt|rt|ft|cbt|soat|imt)-[0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{9}\b)?",
        keywords=("glpat-", "glptt-", "gldt-", "glrt-", "glft-", "glcbt-", "glsoat-", "glimt-"),
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
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", _exact("_-"), keywords=("aiza",)),
    _rule("twilio_api_key", r"\bSK[0-9a-f]{32}\b"),
    _rule(
        "sendgrid_api_key",
        r"\bSG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}",
        _exact("_-"),
        keywords=("sg.",),
    ),
    _rule("mailgun_api_key", r"\bkey-[0-9A-Za-z]{32}\b", _has_digit, keywords=("key-",)),
    _rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        keywords=("eyj",),
    ),
    _rule(
        "azure_storage_key",
        r"(?i:account[_-]?key)[\"']?[\t ]*(?::=|=>|[:=])[\t ]*[\"']?"
        r"([A-Za-z0-9+/]{20,}={0,2})",
        _not_placeholder,
        keywords=("accountkey", "account_key", "account-key"),
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
        # The user may be empty: ``redis://:password@host``.
        r"(?i)\b[a-z][a-z0-9+.-]*://[^" + _WS + r"/:@\"'<>]*:([^" + _WS + r"/@\"'<>]+)@",
        _not_placeholder,
        keywords=("://",),
    ),
    _rule(
        "mysql_password",
        # ``-pPASSWORD`` (no space: ``-p`` alone prompts) among a MySQL/MariaDB client's
        # arguments, on the same command.
        r"\b(?:mysql(?:dump|admin|import|check|show|slap|pump|binlog)?"
        r"|mariadb(?:-?(?:dump|admin|import|check|show|slap|binlog))?)"
        r"(?:[\t ]+[^" + _WS + r"|;&]+)*?[\t ]+-p"
        r"(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^" + _WS + r"\"'`|;&<>]+))",
        _not_placeholder,
        keywords=("mysql", "mariadb"),
    ),
    _rule("secret_key", _SECRET_KEY, _secret_key, keywords=("secret",)),
    _rule(
        "generic_secret",
        _GENERIC,
        _generic,
        keywords=("key", "secret", "token", "passw", "passphrase", "pwd", "credential"),
    ),
    # Last of all: any other rule that finds the same span names it better.
    _rule("aws_secret_access_key", r"[A-Za-z0-9/+]{40}", _bare_aws_secret),
)

#: Every kind, in priority order (a kind's first rule); a kind may have more than one.
SECRET_KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))

#: The rules whose value is a ``(name) = (value)`` assignment's groups 2-4.
_KEYED = frozenset({"secret_key", "generic_secret"})


def _candidates(text: str, rules: Sequence[Rule]) -> list[tuple[int, int, int, str]]:
    markers = [(m.start(), m.end()) for m in MARKER.finditer(text)]
    lowered = text.lower()
    found = []
    for priority, rule in enumerate(rules):
        if rule.keywords and not any(word in lowered for word in rule.keywords):
            continue
        for match in rule.regex.finditer(text):
            group = _generic_group(match) if rule.kind in _KEYED else _secret_group(match)
            start, end = match.span(group)
            if start == end or _touches(markers, match.start(), match.end()):
                continue
            if match.group(group) in DOCUMENTED_EXAMPLES:
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
    visible = "".join(char for char in text if char not in INVISIBLE)
    if visible != text:  # match without zero-width characters, map the spans back
        origin = [index for index, char in enumerate(text) if char not in INVISIBLE]
        _, found = redact(visible, extra_rules)
        kept = [(kind, origin[start], origin[end - 1] + 1) for kind, start, end in found]
        return _replace(text, kept), kept
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
