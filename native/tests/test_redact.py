"""``sf_native.redact``: the corpus, near-misses, idempotence, and agreement with the
plain-Python reference (``redact_reference``, beside these tests) on generated text."""

from __future__ import annotations

import pytest
import redact_reference
from hypothesis import example, given, settings
from hypothesis import strategies as st
from redaction_corpus import NEAR_MISSES, SAMPLES

import sf_native


def test_the_corpus_covers_every_kind() -> None:
    assert {kind for kind, _, _ in SAMPLES} == set(sf_native.SECRET_KINDS)


@pytest.mark.parametrize(("kind", "secret", "text"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_no_corpus_secret_survives(kind: str, secret: str, text: str) -> None:
    result = sf_native.redact(text)
    assert secret not in result.text
    assert f"[REDACTED:{kind}]" in result.text
    assert any(f.kind == kind and text[f.start : f.end] == secret for f in result.findings)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_survive_untouched(text: str) -> None:
    assert sf_native.redact(text) == (text, [])


def test_all_secrets_in_one_document_and_redacting_again_changes_nothing() -> None:
    document = "\n".join(text for _, _, text in SAMPLES) + "\n" + "\n".join(NEAR_MISSES)
    once = sf_native.redact(document)
    assert not [secret for _, secret, _ in SAMPLES if secret in once.text]
    assert all(near in once.text for near in NEAR_MISSES)
    assert sf_native.redact(once.text) == (once.text, [])


def test_extra_rules_are_applied_and_validated() -> None:
    result = sf_native.redact("ticket INTERNAL-7731 ok", [("ticket", r"INTERNAL-(\d+)")])
    assert result.text == "ticket INTERNAL-[REDACTED:ticket] ok"
    with pytest.raises(ValueError, match="kind"):
        sf_native.redact("x", [("bad kind!", "x")])
    with pytest.raises(ValueError, match=r'(?s)bad pattern for "ok".*unclosed group'):
        sf_native.redact("x", [("ok", "(unclosed")])


# Text built from secret-shaped pieces and noise, so rules fire and overlap.
PIECES = st.sampled_from(
    [secret for _, secret, _ in SAMPLES]
    + [text for _, _, text in SAMPLES]
    + NEAR_MISSES
    + [
        "password=",
        "token: ",
        "Bearer ",
        "https://u:",
        "@host/",
        "[REDACTED:jwt]",
        "mysql -uroot",
        " -p",
        "SECRET_KEY=",
        "AccountKey=",
        "redis://:",
        "(",
        ")",
        ".",
        "/",
        " ",
        "\n",
        "'",
        '"',
    ]
)
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=30)), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXT)
# Found by this test: the key ends in a word character the webhook starts with; only
# once the webhook is a marker does the key's word boundary exist.
@example(
    "AKIAZ7QJ3N5R8TXW2PLMhttps://hooks.slack.com/services/T024BE7LD/B01ABCDEF12/Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1"
)
@example("xoxb-1234567890-abcdefghijklAKIAZ7QJ3N5R8TXW2PLM")
# Found too: a rejected candidate (``password: changeme…``) had consumed the start of
# an assignment that only the second pass, with the token a marker, can see.
@example(
    "ghp_R8sK2mQ9vX4tL7pB1nC6dF3hJ5wY0zA2eG8upassword: changemeapi_key = settings.API_KEYAKIAZ7QJ3N5R8TXW2PLM"
)
def test_redaction_is_idempotent_and_matches_the_reference(text: str) -> None:
    ours = sf_native.redact(text)
    assert sf_native.redact(ours.text).text == ours.text
    reference_text, reference_findings = redact_reference.redact(text)
    assert ours.text == reference_text
    assert [tuple(f) for f in ours.findings] == reference_findings
    for finding in ours.findings:  # spans are valid, ordered character offsets
        assert 0 <= finding.start < finding.end <= len(text)
    starts = [f.start for f in ours.findings]
    assert starts == sorted(starts)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_redacts_without_error(text: str) -> None:
    result = sf_native.redact(text)
    assert isinstance(result.text, str)
