"""Text tools: ``diff_stats``, ``apply_edit`` and ``redact`` (``unified_diff`` is
``_core``'s own); each wraps its core function's tuples in named ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, cast

from sf_native import _core

Algorithm = Literal["myers", "patience"]
EditHow = Literal["exact", "whitespace", "fuzzy"]

#: The similarity :func:`apply_edit` needs for a fuzzy match by default.
DEFAULT_EDIT_THRESHOLD: float = _core.DEFAULT_EDIT_THRESHOLD

#: Every built-in secret kind :func:`redact` reports, in priority order.
SECRET_KINDS: tuple[str, ...] = _core.SECRET_KINDS


class DiffStats(NamedTuple):
    """Lines added and removed, and the hunks of the unified diff."""

    insertions: int
    deletions: int
    hunks: int


def diff_stats(
    old: str, new: str, *, context: int = 3, algorithm: Algorithm = "myers"
) -> DiffStats:
    """Counts for the diff :func:`unified_diff` would print with the same arguments."""
    return DiffStats(*_core.diff_stats(old, new, context=context, algorithm=algorithm))


class EditResult(NamedTuple):
    """What :func:`apply_edit` did."""

    text: str
    #: ``"exact"``, ``"whitespace"`` (equal once whitespace runs are collapsed) or
    #: ``"fuzzy"`` (the most similar block of lines).
    how: EditHow
    #: 1-based, inclusive: the lines of the original text that were replaced.
    start_line: int
    end_line: int
    #: 1.0 for exact and whitespace matches.
    similarity: float


def apply_edit(
    text: str, search: str, replace: str, *, threshold: float = DEFAULT_EDIT_THRESHOLD
) -> EditResult:
    """Replace the one place in ``text`` that matches ``search`` with ``replace``.

    Tries, in order: an exact substring match; a match of whole lines once runs of
    whitespace are collapsed (leading and trailing blank lines of ``search`` are
    ignored); the most similar block of as many lines as ``search`` has, if its
    similarity (1 - edit distance / length, over the aligned lines) is at least
    ``threshold``. Line-based matches take the file's indentation and line endings
    for ``replace``.

    Raises :class:`EditAmbiguous` when the search matches more than one place (or
    two fuzzy candidates score within 0.02 of each other) and :class:`EditNoMatch`
    when nothing is similar enough; both messages give line ranges (the best
    candidate's, for no match), and both are ``ValueError`` and ``NativeError``.
    An empty search or a threshold outside (0, 1] is a plain ``ValueError``.
    """
    new_text, how, start_line, end_line, similarity = _core.apply_edit(
        text, search, replace, threshold=threshold
    )
    return EditResult(new_text, cast(EditHow, how), start_line, end_line, similarity)


class Finding(NamedTuple):
    """A redacted secret: its kind, character offsets in the original text, and the
    rule that matched (``sf.<kind>`` for SF's own rules, the gitleaks rule id, or an
    extra rule's kind)."""

    kind: str
    start: int
    end: int
    rule: str = ""


class Redaction(NamedTuple):
    text: str
    findings: list[Finding]


def redact(
    text: str, extra_rules: Sequence[tuple[str, str]] | None = None, *, gitleaks: bool = True
) -> Redaction:
    """Replace secrets in ``text`` with ``[REDACTED:<kind>]``.

    Built-in kinds are in :data:`SECRET_KINDS`: SF's own rules first (its API tokens
    ``sf_…``, bare or in a command), then gitleaks' default rule set (about 220 rules,
    each reported under its gitleaks id; ``gitleaks=False`` leaves them out). SF's own
    cover private-key blocks, AWS key ids and secrets (named, or a bare 40-character
    one: never a 40-hex git SHA), GitHub, GitLab, Slack, OpenAI, Anthropic, Stripe,
    Google (``AIza…``), Twilio (``SK…``), SendGrid (``SG.…``) and Mailgun (``key-…``)
    tokens, Slack webhooks, JWTs, Stripe webhook secrets (``whsec_…``), Azure SAS
    ``sig=``, ``.npmrc`` ``_auth=``, docker ``config.json`` ``"auth"``, kubeconfig
    ``client-key-data``, a GitHub token wrapped over two lines, Azure ``AccountKey=``,
    ``Authorization:`` header tokens, passwords in URLs (user and host are kept; the
    user may be empty, ``redis://:pw@host``), ``mysql -pPASSWORD``, ``SECRET_KEY =
    ...`` and generic assignments to secret-sounding names (``API_KEY=``, ``"token":
    ...``, ``password: ...``) whose value has enough entropy. Placeholders
    (``changeme``, ``${VAR}``, ``<token>``, ``your-key-here``, ``xxxx``), code (``token
    = get_token()``, ``key = settings.API_KEY``) and the
    vendors' documented example keys (``AKIAIOSFODNN7EXAMPLE``) are left alone.

    ``extra_rules`` are ``(kind, regex)`` pairs in Rust ``regex`` syntax; the
    secret is the first capture group, or the whole match without groups. They
    win ties against the built-in rules. A bad kind name or regex raises
    ``ValueError``.

    Zero-width characters (U+200B-U+200D, U+2060, U+FEFF, soft hyphen) are ignored
    when matching: a token split by them is found, and they are redacted with it.

    Redacting already-redacted text changes nothing. The result holds the new
    text and the findings in order, each with the id of the rule that matched.
    """
    rules = list(extra_rules or ())
    current, raw = _core.redact(text, rules, gitleaks=gitleaks)
    found = [Finding(*finding) for finding in raw]
    # A marker changes what is around it: it can put a word boundary where a rule
    # needs one (``AKIA…`` right before a webhook URL), or remove the text a rejected
    # candidate had consumed. Redact the redacted text again until nothing new turns
    # up, so that redacting twice changes nothing; most text has no secret and pays
    # for one pass.
    for _ in range(_MAX_PASSES):
        if not raw:
            break
        current_again, raw = _core.redact(current, rules, gitleaks=gitleaks)
        later = [
            Finding(kind, _original(found, start, end=False), _original(found, end, end=True), rule)
            for kind, start, end, rule in raw
        ]
        found = _merged(found, later)
        current = current_again
    return Redaction(current, found)


_MAX_PASSES = 8


def _merged(found: list[Finding], later: list[Finding]) -> list[Finding]:
    """``found`` and ``later`` in order; a later finding replaces those inside it."""
    kept = [f for f in found if not any(g.start <= f.start and f.end <= g.end for g in later)]
    return sorted([*kept, *later], key=lambda finding: finding.start)


def _original(found: list[Finding], position: int, *, end: bool) -> int:
    """Where ``position`` of the text redacted by ``found`` lies in the original text."""
    shift = 0
    for prior in found:
        marker_start = prior.start - shift
        marker_end = marker_start + len(f"[REDACTED:{prior.kind}]")
        if position <= marker_start:
            break
        if position < marker_end:  # inside a marker: its secret's edge
            return prior.end if end else prior.start
        shift += (prior.end - prior.start) - (marker_end - marker_start)
    return position + shift
