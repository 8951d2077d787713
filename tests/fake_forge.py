"""A fake forge over real HTTP for the forge adapter's tests: the few GitHub REST and
GitLab v4 endpoints SF uses, answering the way those APIs do (status codes, JSON
shapes), with the reviews scripted by the test.

    forge.github_reviews[1] = [{"id": 7, "state": "CHANGES_REQUESTED", ...}]
    forge.open_issue(1, "Say hello", "…", labels=["sf"]); forge.comment(1, "and hi")
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
    # Issues, GitHub-shaped (``open_issue``), GitLab-shaped (``gitlab_issues``), and their
    # comments by issue number (GitHub's) or iid (GitLab's notes).
    issues: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    gitlab_issues: list[dict[str, Any]] = field(default_factory=list)
    gitlab_issue_notes: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    next_id: int = 9000
    url: str = ""
    # When set, every answer is this body with status 200 (a proxy's error page, a
    # JSON document of another shape): what a forge must not be trusted to never send.
    broken: bytes = b""
    broken_type: str = "text/html"

    def answer(self, method: str, path: str, body: dict[str, Any], auth: str) -> tuple[int, Any]:
        self.requests.append((method, path, body))
        if auth not in (f"Bearer {TOKEN}", TOKEN):
            return 401, {"message": "Bad credentials"}
        issues = re.fullmatch(r"/repos/[^/]+/[^/]+/issues(?:/(\d+)/comments)?", path)
        if issues:
            return self._github_issues(method, issues.group(1), body)
        notes = re.fullmatch(r"/projects/[^/]+/issues(?:/(\d+)/notes)?", path)
        if notes:
            return self._gitlab_issues(method, notes.group(1), body)
        github = re.fullmatch(r"/repos/([^/]+)/([^/]+)/pulls(?:/(\d+)/(reviews|comments))?", path)
        if github:
            return self._github(method, github, body)
        gitlab = re.fullmatch(
            r"/projects/([^/]+)/merge_requests(?:/(\d+)/(notes|reviewers))?", path
        )
        if gitlab:
            return self._gitlab(method, gitlab, body)
        return 404, {"message": "Not Found"}

    def open_issue(
        self, number: int, title: str, body: str, labels: list[str], author: str = "rita"
    ) -> dict[str, Any]:
        self.next_id += 1
        issue = {
            "id": self.next_id, "number": number, "title": title, "body": body,
            "user": {"login": author}, "state": "open", "labels": [{"name": n} for n in labels],
            "html_url": f"{self.url}/acme/greet/issues/{number}",
        }  # fmt: skip
        self.issues.append(issue)
        return issue

    def comment(self, number: int, body: str, author: str = "rita") -> dict[str, Any]:
        self.next_id += 1
        made = {"id": self.next_id, "body": body, "user": {"login": author}}
        self.issue_comments.setdefault(number, []).append(made)
        return made

    def _github_issues(
        self, method: str, number: str | None, body: dict[str, Any]
    ) -> tuple[int, Any]:
        if number is None:  # GET ?labels=a,b&state=open: every label, ignoring case
            wanted = {n.strip().casefold() for n in body.get("labels", [""])[0].split(",") if n}
            found = [
                i for i in self.issues
                if i["state"] == body.get("state", ["open"])[0]
                and wanted <= {label["name"].casefold() for label in i["labels"]}
            ]  # fmt: skip
            return 200, found
        if method == "POST":
            return 201, self.comment(int(number), body["body"], author="sf-bot")
        return 200, self.issue_comments.get(int(number), [])

    def _gitlab_issues(self, method: str, iid: str | None, body: dict[str, Any]) -> tuple[int, Any]:
        if iid is None:
            wanted = {n.strip().casefold() for n in body.get("labels", [""])[0].split(",") if n}
            found = [
                i for i in self.gitlab_issues
                if i["state"] == body.get("state", ["opened"])[0]
                and wanted <= {label.casefold() for label in i["labels"]}
            ]  # fmt: skip
            return 200, found
        notes = self.gitlab_issue_notes.setdefault(int(iid), [])
        if method == "POST":
            self.next_id += 1
            notes.append({"id": self.next_id, "body": body["body"], "system": False,
                          "author": {"username": "sf-bot"}})  # fmt: skip
            return 201, notes[-1]
        return 200, notes

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
