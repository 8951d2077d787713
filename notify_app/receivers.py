"""Where the notifications app listens: notices (in the sender's transaction) and the
workers' sweep (deliveries whose lease ran out, retries whose time came)."""

from __future__ import annotations

from typing import Any

from notify_app.delivery import deliveries_run
from notify_app.outbox import on_notice_raised
from sf_core.notices import notice_raised
from sf_core.signals import sweep_due


def on_sweep_due(sender: object, **_: Any) -> dict[str, int]:
    return deliveries_run(worker="sweep")


def connect() -> None:
    notice_raised.connect(on_notice_raised, dispatch_uid="notify_app.outbox")
    sweep_due.connect(on_sweep_due, dispatch_uid="notify_app.sweep")
