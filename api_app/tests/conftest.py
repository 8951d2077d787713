from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from api_app.tokens import token_create


class Api:
    """A test client speaking JSON with a bearer token."""

    def __init__(self, client: Client, secret: str) -> None:
        self.client, self.secret = client, secret

    def _headers(self, key: str | None) -> dict[str, str]:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.secret}"}
        if key is not None:
            headers["HTTP_IDEMPOTENCY_KEY"] = key
        return headers

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api{path}", params, **self._headers(None))

    def post(self, path: str, body: Any = None, key: str | None = None) -> Any:
        return self.client.post(
            f"/api{path}", body or {}, content_type="application/json", **self._headers(key)
        )


def api_for(client: Client, user: User, **kwargs: Any) -> Api:
    return Api(client, token_create(user=user, name="test", **kwargs).secret)


@pytest.fixture
def api(client: Client, user: User) -> Api:
    return api_for(client, user)
