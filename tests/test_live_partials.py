"""Partials the websocket consumers re-render carry nothing a request must supply.

A consumer renders with ``render_to_string`` and no request, so a ``{% csrf_token %}``
inside a partial comes back empty and the form it belongs to fails with 403 after
the first live update. The token is on <body> once (``hx-headers``); forms in
partials post with ``hx-post``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

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


BODY_HEADERS = re.compile(r"<body hx-headers='([^']*)'")


@pytest.mark.django_db
def test_the_header_on_body_carries_a_token_the_server_accepts(agent_session: Any) -> None:
    """Every hx-post from a live partial sends the header on <body>: it must hold the
    page's real token (an empty or misspelt one passes a look at the markup, then each
    click after a live update gets 403)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(agent_session.created_by)
    page = client.get(f"/sessions/{agent_session.pk}/").content.decode()
    found = BODY_HEADERS.search(page)
    assert found, "no hx-headers on <body>"
    headers = json.loads(found.group(1))
    url = f"/sessions/{agent_session.pk}/command"
    form = {"text": "/status"}
    assert client.post(url, form, HTTP_HX_REQUEST="true").status_code == 403
    answer = client.post(url, form, HTTP_HX_REQUEST="true", headers=headers)
    assert answer.status_code == 200, f"{answer.status_code}: the token on <body> was refused"
