"""Fixtures shared by every test package."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from sf_web.asgi import application

ORIGIN = (b"origin", b"http://127.0.0.1")


@pytest.fixture
def user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="ada", password="correct horse 42")


@pytest.fixture
def staff_user(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(
        username="grace", password="correct horse 42", is_staff=True
    )


@pytest.fixture
def logged_in_client(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def session_cookie(client: Client, user: User) -> bytes:
    """A ``cookie`` header value carrying a logged-in session for ``user``."""
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def websocket(
    path: str, *, cookie: bytes | None = None, origin: bytes | None = ORIGIN[1]
) -> WebsocketCommunicator:
    headers: list[tuple[bytes, bytes]] = []
    if origin is not None:
        headers.append((b"origin", origin))
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(application, path, headers=headers)
