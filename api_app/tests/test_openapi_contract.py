"""The committed OpenAPI document (docs/openapi.json) is what the code serves."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from django.test import Client

from api_app.api import openapi_text

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def test_the_committed_openapi_document_matches_the_code() -> None:
    current, committed = openapi_text(), COMMITTED.read_text()
    if current != committed:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(True), current.splitlines(True), "committed", "code"
                )
            )[:60]
        )
        pytest.fail(
            "docs/openapi.json is out of date; run `python scripts/openapi.py --write`\n" + diff
        )


@pytest.mark.django_db
def test_the_document_and_its_docs_page_are_served_without_a_token(client: Client) -> None:
    document = client.get("/api/openapi.json").json()
    assert "/api/sessions/{session_id}/commands" in document["paths"]
    assert client.get("/api/docs").status_code == 200


def test_the_docs_page_uses_sfs_own_assets(client: Client) -> None:
    """No CDN: the machine may be offline, and the page must not load scripts from
    another origin."""
    page = client.get("/api/docs").content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in page
    assert "cdn." not in page
