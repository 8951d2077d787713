"""Partials the websocket consumers re-render carry nothing a request must supply.

A consumer renders with ``render_to_string`` and no request, so a ``{% csrf_token %}``
inside a partial comes back empty and the form it belongs to fails with 403 after
the first live update. The token is on <body> once (``hx-headers``); forms in
partials post with ``hx-post``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = sorted(
    path
    for pattern in ("templates/**/*.html", "*_app/templates/**/*.html")
    for path in ROOT.glob(pattern)
)
PARTIAL = re.compile(r"{%\s*partialdef\s+([\w-]+).*?%}(.*?){%\s*endpartialdef\s*%}", re.S)


def test_there_are_partials_to_check() -> None:
    assert any(PARTIAL.search(path.read_text()) for path in TEMPLATES)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_partial_needs_a_request(path: Path) -> None:
    for name, body in PARTIAL.findall(path.read_text()):
        assert "csrf_token" not in body, f"{name}: a per-form token empties on a live render"
        assert 'method="post"' not in body, f"{name}: post with hx-post (the header on <body>)"
