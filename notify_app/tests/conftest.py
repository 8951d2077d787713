from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from notify_app import outbox
from notify_app.senders import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_verify

SECRET = "s3cret-for-tests"


@pytest.fixture(autouse=True)
def _no_hand_over(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Tests deliver by calling the delivery functions themselves: a committed outbox
    row must not also start a thread or send a Celery message to a worker."""
    kicks: list[int] = []
    monkeypatch.setattr(outbox, "_hand_over", lambda: kicks.append(1))
    return kicks


@dataclass
class Received:
    body: bytes
    headers: dict[str, str]
    verified: bool

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookServer:
    """A real HTTP server on 127.0.0.1 that records each POST and checks its signature
    the way docs/notifications.md tells a receiver to."""

    url: str = ""
    secret: str = SECRET
    answer: int = 200
    received: list[Received] = field(default_factory=list)
    # The first ``hold`` requests are recorded, then left unanswered until ``release``
    # is set (a worker killed while it waits for the answer).
    hold: int = 0
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def webhook(settings: Any) -> Iterator[WebhookServer]:
    """The receiver, on loopback: allowed by the server setting an operator would use
    for an internal host (a project's preferences cannot)."""
    settings.SF_NET_ALLOW_HOSTS = ["127.0.0.1"]
    state = WebhookServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            verified = signature_verify(
                state.secret,
                timestamp=self.headers.get(TIMESTAMP_HEADER, ""),
                body=body,
                signed=self.headers.get(SIGNATURE_HEADER, ""),
            )
            headers = {name.lower(): value for name, value in self.headers.items()}
            state.received.append(Received(body, headers, verified))
            if len(state.received) <= state.hold:
                state.release.wait(timeout=30)
            self.send_response(state.answer if verified else 401)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
