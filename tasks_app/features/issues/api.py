"""The issues side of a forge's API (GitHub REST, GitLab v4): the open issues carrying
a label, an issue's comments, and a comment SF posts. Built on the pull-request
adapter (``tasks_app.features.forge``): the same guarded client, token and API rules,
and an answer that is not the shape the forge documents is a ``ForgeError``.

At most ``PAGES`` pages of ``PER_PAGE`` are read per call (issues oldest first,
comments in the order they were written): a label with more open issues than that is
taken a page at a time as the first ones are closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from agents_app.models import Project
from sf_core.errors import PolicyInvalid
from tasks_app.features.forge import (
    ForgeError,
    GitHubForge,
    GitLabForge,
    documented,
    forge_for,
)

PER_PAGE = 100
PAGES = 5
# In every comment SF posts: a comment carrying it is never read back as a follow-up
# (even when the forge's answer to the post was lost and its id never recorded).
MARK = "<!-- sf:forge-issue -->"


@dataclass(frozen=True)
class Issue:
    id: str  # the forge's own id (unique on the forge)
    number: int  # what people write: #12 (GitLab's iid)
    title: str
    body: str
    author: str
    url: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Comment:
    id: str
    author: str
    body: str


class IssuesApi(Protocol):
    kind: str
    repository: str

    def issues(self, label: str) -> list[Issue]: ...

    def comments(self, number: int) -> list[Comment]: ...

    def comment(self, number: int, body: str) -> str: ...


def _pages(forge: GitHubForge | GitLabForge, path: str, params: dict[str, Any]) -> list[Any]:
    found: list[Any] = []
    for page in range(1, PAGES + 1):
        answer = forge.call("GET", path, params={**params, "per_page": PER_PAGE, "page": page})
        if not isinstance(answer, list):
            raise ForgeError(
                f"{forge.kind}'s answer to GET {path} is not a list, as its API documents "
                f"({type(answer).__name__})"
            )
        found.extend(answer)
        if len(answer) < PER_PAGE:
            break
    return found


class GitHubIssues:
    def __init__(self, forge: GitHubForge) -> None:
        self.forge, self.kind = forge, forge.kind
        self.repository = forge.policy.repository

    def issues(self, label: str) -> list[Issue]:
        params = {"labels": label, "state": "open", "sort": "created", "direction": "asc"}
        found = _pages(self.forge, f"{self.forge.repo}/issues", params)
        with documented(self.kind, "the list of issues"):
            return [
                Issue(
                    id=str(int(i["id"])),
                    number=int(i["number"]),
                    title=str(i.get("title") or ""),
                    body=str(i.get("body") or ""),
                    author=str((i.get("user") or {}).get("login", "")),
                    url=str(i.get("html_url") or ""),
                    labels=tuple(str(label["name"]) for label in i.get("labels") or []),
                )
                for i in found
                if "pull_request" not in i  # GitHub lists pull requests as issues too
            ]

    def comments(self, number: int) -> list[Comment]:
        found = _pages(self.forge, f"{self.forge.repo}/issues/{number}/comments", {})
        with documented(self.kind, f"the comments of issue {number}"):
            return [
                Comment(
                    id=str(int(c["id"])),
                    author=str((c.get("user") or {}).get("login", "")),
                    body=str(c.get("body") or ""),
                )
                for c in found
            ]

    def comment(self, number: int, body: str) -> str:
        made = self.forge.call(
            "POST", f"{self.forge.repo}/issues/{number}/comments", json={"body": body}
        )
        with documented(self.kind, f"a comment on issue {number}"):
            return str(int(made["id"]))


class GitLabIssues:
    def __init__(self, forge: GitLabForge) -> None:
        self.forge, self.kind = forge, forge.kind
        self.repository = forge.policy.repository

    def issues(self, label: str) -> list[Issue]:
        params = {"labels": label, "state": "opened", "order_by": "created_at", "sort": "asc"}
        found = _pages(self.forge, f"{self.forge.repo}/issues", params)
        with documented(self.kind, "the list of issues"):
            return [
                Issue(
                    id=str(int(i["id"])),
                    number=int(i["iid"]),
                    title=str(i.get("title") or ""),
                    body=str(i.get("description") or ""),
                    author=str((i.get("author") or {}).get("username", "")),
                    url=str(i.get("web_url") or ""),
                    labels=tuple(str(label) for label in i.get("labels") or []),
                )
                for i in found
            ]

    def comments(self, number: int) -> list[Comment]:
        path = f"{self.forge.repo}/issues/{number}/notes"
        found = _pages(self.forge, path, {"sort": "asc", "order_by": "created_at"})
        with documented(self.kind, f"the notes of issue {number}"):
            return [
                Comment(
                    id=str(int(n["id"])),
                    author=str((n.get("author") or {}).get("username", "")),
                    body=str(n.get("body") or ""),
                )
                for n in found
                if not n.get("system")  # "added label ~sf", "closed": GitLab's own
            ]

    def comment(self, number: int, body: str) -> str:
        made = self.forge.call(
            "POST", f"{self.forge.repo}/issues/{number}/notes", json={"body": body}
        )
        with documented(self.kind, f"a note on issue {number}"):
            return str(int(made["id"]))


def issues_api_for(project: Project) -> IssuesApi | None:
    """The issues API of the project's forge, or None when its policy takes no issues.
    The forge's rules are checked as for pull requests (``forge_for``)."""
    try:
        policy = project.parsed_policy.forge
    except PolicyInvalid as exc:
        raise ForgeError(f"project {project.name}: {exc}") from None
    if policy is None or policy.issues is None:
        return None
    forge = forge_for(project)
    if isinstance(forge, GitHubForge):
        return GitHubIssues(forge)
    assert isinstance(forge, GitLabForge)
    return GitLabIssues(forge)
