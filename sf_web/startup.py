"""Stopping with one line, not a traceback, when the settings are wrong.

Every entry point (``manage.py``, daphne's ``sf_web.asgi``, ``celery -A sf_web``) goes
through ``sf_web/celery.py``, which reads ``.sf/env`` and the settings first. A missing
or bad setting raises ``ImproperlyConfigured`` naming the variable and what is wrong;
an operator needs that line, not the 70 lines of import machinery above it. With
``SF_DEBUG`` on, the traceback is kept for whoever is debugging SF itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})


@contextmanager
def settings_or_exit() -> Iterator[None]:
    try:
        yield
    except ImproperlyConfigured as exc:
        if os.environ.get("SF_DEBUG", "").strip().lower() in _TRUE:
            raise
        message = " ".join(str(exc).split())  # one line, whatever the message held
        raise SystemExit(f"SF cannot start: {message}") from None
