"""``send_on_commit``: a receiver sees committed state, and a call outside a transaction
is refused instead of sending at once."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.dispatch import Signal

from sf_core.signals import NoTransaction, send_on_commit, session_runnable


@pytest.mark.django_db
def test_inside_a_transaction_the_signal_waits_for_the_commit(
    django_capture_on_commit_callbacks: Any,
) -> None:
    heard: list[int] = []
    signal = Signal()
    signal.connect(lambda sender, **kw: heard.append(kw["n"]), weak=False)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        send_on_commit(signal, sender=None, n=1)
        assert heard == [], "nothing before the commit"
    assert heard == [1]


def test_outside_a_transaction_it_is_refused_and_names_the_signal() -> None:
    heard: list[object] = []
    session_runnable.connect(lambda sender, **kw: heard.append(kw), weak=False, dispatch_uid="t")
    try:
        with pytest.raises(NoTransaction, match=r"send_on_commit\(session_runnable\)"):
            send_on_commit(session_runnable, sender=None, session_id=1)
    finally:
        session_runnable.disconnect(dispatch_uid="t")
    assert heard == [], "nothing was sent"
