"""A fake forge over real HTTP for the forge adapter's tests: the few GitHub REST and
GitLab v4 endpoints SF uses, answering the way those APIs do (status codes, JSON
shapes), with the reviews scripted by the test.

    forge.github_reviews[1] = [{"id": 7, "state": "CHANGES_REQUESTED", ...}]
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

TOKEN = "forge-token-1234"


@dataclass
class FakeForge:
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    github_reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    github_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    gitlab_reviewers: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    gitlab_notes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    url: str = ""
    # When set, every answer is this body with status 200 (a proxy's error page, a
    # JSON document of another shape): what a forge must not be trusted to never send.
    broken: bytes = b""
    broken_type: str = "text/html"

    def answer(self, method: str, path: str, body: dict[str, Any], auth: str) -> tuple[int, Any]:
        self.requests.append((method, path, body))
        if auth not in (f"Bearer {TOKEN}", TOKEN):
            return 401, {"message": "Bad credentials"}
        github = re.fullmatch(r"/repos/([^/]+)/([^/]+)/pulls(?:/(\d+)/(reviews|comments))?", path)
        if github:
            return self._github(method, github, body)
        gitlab = re.fullmatch(
            r"/projects/([^/]+)/merge_requests(?:/(\d+)/(notes|reviewers))?", path
        )
        if gitlab:
            return self._gitlab(method, gitlab, body)
        return 404, {"message": "Not Found"}

    def _github(self, method: str, match: re.Match[str], body: dict[str, Any]) -> tuple[int, Any]:
        owner, repo, number, what = match.groups()
        if number:
            table = self.github_reviews if what == "reviews" else self.github_comments
            return 200, table.get(int(number), [])
        if method == "GET":  # ?head=owner:branch
            head = body.get("head", [""])[0]
            found = [p for p in self.pulls.values() if f"{owner}:{p['head']}" == head]
            return 200, found
        if any(p["head"] == body["head"] and p["state"] == "open" for p in self.pulls.values()):
            return 422, {"message": "Validation Failed", "errors": [{"message": "A pull request already exists"}]}  # fmt: skip
        number_new = len(self.pulls) + 1
        self.pulls[number_new] = {
            "number": number_new,
            "html_url": f"{self.url}/{owner}/{repo}/pull/{number_new}",
            "head": body["head"],
            "base": body["base"],
            "title": body["title"],
            "body": body["body"],
            "state": "open",
        }
        return 201, self.pulls[number_new]

    def _gitlab(self, method: str, match: re.Match[str], body: dict[str, Any]) -> tuple[int, Any]:
        _, iid, what = match.groups()
        if iid:
            table = self.gitlab_notes if what == "notes" else self.gitlab_reviewers
            return 200, table.get(int(iid), [])
        iid_new = len(self.pulls) + 1
        self.pulls[iid_new] = {
            "iid": iid_new,
            "web_url": f"{self.url}/merge_requests/{iid_new}",
            "head": body["source_branch"],
            "base": body["target_branch"],
            "title": body["title"],
            "state": "opened",
        }
        return 201, self.pulls[iid_new]


def _handler(forge: FakeForge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _respond(self, method: str) -> None:
            parsed = urlparse(self.path)
            if method == "POST":
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
            else:
                body = parse_qs(parsed.query)
            auth = self.headers.get("authorization") or self.headers.get("private-token") or ""
            status, answer = forge.answer(method, parsed.path, body, auth)
            data, kind = json.dumps(answer).encode(), "application/json"
            if forge.broken:
                status, data, kind = 200, forge.broken, forge.broken_type
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._respond("GET")

        def do_POST(self) -> None:
            self._respond("POST")

    return Handler


@contextmanager
def fake_forge_served() -> Iterator[FakeForge]:
    """A fake forge on loopback. SF refuses loopback API hosts unless the server lists
    them (SF_FORGE_API_HOSTS, SF_NET_ALLOW_HOSTS): tests that talk to it set both."""
    forge = FakeForge()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(forge))
    server.daemon_threads = True
    forge.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield forge
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def fake_forge() -> Iterator[FakeForge]:
    with fake_forge_served() as forge:
        yield forge
