"""Redaction markers written by the model: restored from the file, or refused."""

from __future__ import annotations

import pytest

from agents_app.runtime.unredact import MarkerUnresolved, restore_markers

AWS = "AKIAZ7QJ3N5R8TXW2PLM"  # not AWS's documented examples: redaction keeps those
OTHER = "AKIAQ4X8M2N6P9R3T5V7"
MARK = "[REDACTED:aws_access_key_id]"


def test_text_without_markers_is_untouched() -> None:
    assert restore_markers("x = 1", None, "a.py") == "x = 1"


def test_a_marker_becomes_the_one_secret_of_its_kind_in_the_file() -> None:
    original = f"é key = {AWS}\n"
    assert restore_markers(f"key = {MARK}  # kept", original, "a.py") == f"key = {AWS}  # kept"
    # the same secret twice in the file is still one secret
    twice = f"a = {AWS}\nb = {AWS}\n"
    assert restore_markers(f"{MARK}{MARK}", twice, "a.py") == AWS + AWS


@pytest.mark.parametrize(
    ("original", "message"),
    [
        (None, "the file holds no such secret"),
        ("x = 1\n", "the file holds no such secret"),
        (f"a = {AWS}\nb = {OTHER}\n", "stands for 2 different secrets"),
    ],
)
def test_a_marker_that_cannot_be_restored_is_refused(original: str | None, message: str) -> None:
    with pytest.raises(MarkerUnresolved, match=message):
        restore_markers(f"key = {MARK}", original, "a.py")
