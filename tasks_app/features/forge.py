"""Pull requests on the project's forge (docs/forge.md): a task waiting for a person's
review is pushed to the policy's remote and opened as a pull request (GitHub) or merge
request (GitLab); the sweep reads the reviews back. In record mode the repository of
record is the forge's own (``ProjectPolicy`` refuses any other) and the branch is there
since its checkpoint: nothing is pushed here. Changes requested there send the
task back with the reviewer's words and line comments, as "Request changes" does in SF;
an approval there approves and merges it in SF (the merge stays SF's, fail-closed).

HTTP through httpx (already a dependency of litellm; timeouts and a plain client, no
SDK per forge) with SF's address guard on every connection (``sf_core.netguard``). The
API is the forge's public one (api.github.com, gitlab.com/api/v4) or on a host the
server's ``SF_FORGE_API_HOSTS`` lists; the token is read from ``SF_FORGE_TOKEN`` or an
``SF_FORGE_TOKEN_<NAME>`` variable the policy names (checked when the policy is
validated and again here before a request), sent in a header and never stored or
logged. An answer that is not JSON, or not the shape the forge documents, is a
``ForgeError`` for that pull request; the sweep goes on with the others.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

import httpx

from agents_app.models import Project
from agents_app.schemas import ForgeKind, ForgePolicy, forge_api_problem, forge_token_problem
from sf_core.actors import Actor
from sf_core.errors import PolicyInvalid, SfError
from sf_core.git import GitError, git
from sf_core.netguard import guarded_client
from tasks_app.engine.review import task_approve, task_request_changes
from tasks_app.models import ForgePullRequest, PullRequestState, Task, TaskStatus
from tasks_app.workspaces import workspace_of

logger = logging.getLogger("sf.forge")
TIMEOUT = 15.0  # seconds per forge request


class ForgeError(SfError):
    """The forge refused or could not be reached; the message says which and why."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status  # the forge's HTTP status; 0 when it could not be reached


@dataclass(frozen=True)
class LineComment:
    path: str
    line: int | None
    body: str


@dataclass(frozen=True)
class Review:
    id: str
    state: str  # approved | changes_requested | commented
    author: str
    body: str
    comments: list[LineComment] = field(default_factory=list)


@dataclass(frozen=True)
class Opened:
    number: int
    url: str


class Forge(Protocol):
    kind: str

    def open(self, *, branch: str, base: str, title: str, body: str) -> Opened: ...

    def reviews(self, number: int) -> list[Review]: ...


class _Http:
    def __init__(self, policy: ForgePolicy, headers: dict[str, str]) -> None:
        self.policy = policy
        # The guard on every connection (sf_core.netguard): the API's host is
        # resolved once and must be public unless the server's SF_NET_ALLOW_HOSTS
        # lists it; no redirect is followed (the token would go with it).
        self.client = guarded_client(base_url=policy.api_url, headers=headers, timeout=TIMEOUT)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.client.request(method, path, **kwargs)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ForgeError(f"{self.policy.kind} at {self.policy.api_url}: {exc}") from None
        if response.status_code >= 400:
            raise ForgeError(
                f"{self.policy.kind} answered {response.status_code} to {method} {path}: "
                f"{response.text[:300]}",
                status=response.status_code,
            )
        try:
            return response.json()
        except ValueError:
            raise ForgeError(
                f"{self.policy.kind} answered {method} {path} with something that is not "
                f"JSON ({response.headers.get('content-type', 'no content type')}): "
                f"{response.text[:200]!r}"
            ) from None


@contextmanager
def documented(forge: str, what: str) -> Iterator[None]:
    """An answer that is JSON but not the shape the forge documents is a ForgeError
    (naming what was read), not a KeyError out of the sweep."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ForgeError(
            f"{forge}'s answer to {what} is not what its API documents "
            f"({type(exc).__name__}: {exc})"
        ) from None


class GitHubForge(_Http):
    kind = ForgeKind.GITHUB.value

    def __init__(self, policy: ForgePolicy, token: str) -> None:
        super().__init__(
            policy,
            {
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        self.repo = f"/repos/{policy.repository}"

    def open(self, *, branch: str, base: str, title: str, body: str) -> Opened:
        payload = {"title": title, "head": branch, "base": base, "body": body}
        try:
            made = self.call("POST", f"{self.repo}/pulls", json=payload)
        except ForgeError as exc:
            if exc.status != 422:  # 422: already open for this branch (a second round)
                raise
            owner = self.policy.repository.split("/")[0]
            found = self.call("GET", f"{self.repo}/pulls", params={"head": f"{owner}:{branch}"})
            if not found:
                raise exc from None
            made = found[0]
        with documented(self.kind, "opening a pull request"):
            return Opened(number=int(made["number"]), url=str(made.get("html_url", "")))

    def reviews(self, number: int) -> list[Review]:
        with documented(self.kind, f"the reviews of pull request {number}"):
            return self._reviews(number)

    def _reviews(self, number: int) -> list[Review]:
        comments = self.call("GET", f"{self.repo}/pulls/{number}/comments")
        by_review: dict[str, list[LineComment]] = {}
        for c in comments:
            line = c.get("line") or c.get("original_line")
            by_review.setdefault(str(c.get("pull_request_review_id")), []).append(
                LineComment(path=str(c.get("path", "")), line=line, body=str(c.get("body", "")))
            )
        return [
            Review(
                id=str(r["id"]),
                state=str(r.get("state", "")).lower(),
                author=str((r.get("user") or {}).get("login", "")),
                body=str(r.get("body") or ""),
                comments=by_review.get(str(r["id"]), []),
            )
            for r in self.call("GET", f"{self.repo}/pulls/{number}/reviews")
        ]


class GitLabForge(_Http):
    """Merge requests; a reviewer's state (GitLab 16.7+: approved, requested_changes)
    decides, the merge request's notes (with their diff positions) are the words."""

    kind = ForgeKind.GITLAB.value

    def __init__(self, policy: ForgePolicy, token: str) -> None:
        super().__init__(policy, {"PRIVATE-TOKEN": token})
        self.repo = f"/projects/{quote(policy.repository, safe='')}"

    def open(self, *, branch: str, base: str, title: str, body: str) -> Opened:
        payload = {
            "source_branch": branch,
            "target_branch": base,
            "title": title,
            "description": body,
        }
        made = self.call("POST", f"{self.repo}/merge_requests", json=payload)
        with documented(self.kind, "opening a merge request"):
            return Opened(number=int(made["iid"]), url=str(made.get("web_url", "")))

    def reviews(self, number: int) -> list[Review]:
        with documented(self.kind, f"the reviews of merge request {number}"):
            return self._reviews(number)

    def _reviews(self, number: int) -> list[Review]:
        notes = [
            n
            for n in self.call("GET", f"{self.repo}/merge_requests/{number}/notes")
            if not n.get("system")
        ]
        found = []
        for reviewer in self.call("GET", f"{self.repo}/merge_requests/{number}/reviewers"):
            state = str(reviewer.get("state", ""))
            user = (reviewer.get("user") or {}).get("username", "")
            if state not in ("approved", "requested_changes"):
                continue
            mine = [n for n in notes if (n.get("author") or {}).get("username") == user]
            comments = [
                LineComment(
                    path=str(n["position"].get("new_path", "")),
                    line=n["position"].get("new_line"),
                    body=str(n.get("body", "")),
                )
                for n in mine
                if n.get("position")
            ]
            general = "\n".join(str(n.get("body", "")) for n in mine if not n.get("position"))
            found.append(
                Review(
                    id=f"{user}:{state}:{reviewer.get('created_at', '')}",
                    state="changes_requested" if state == "requested_changes" else state,
                    author=str(user),
                    body=general,
                    comments=comments,
                )
            )
        return found


def forge_for(project: Project) -> Forge | None:
    """The project's forge, or None when its policy names none."""
    try:
        policy = project.parsed_policy.forge
    except PolicyInvalid as exc:
        raise ForgeError(f"project {project.name}: {exc}") from None
    if policy is None:
        return None
    # Checked again at use: a policy stored before these rules, or a server setting
    # that changed since, must not send a token anywhere.
    problem = forge_token_problem(policy.token_env) or forge_api_problem(
        policy.kind, policy.api_url
    )
    if problem:
        raise ForgeError(f"project {project.name}: {problem}")
    token = os.environ.get(policy.token_env, "")
    if not token:
        raise ForgeError(f"the forge's token is not set: set {policy.token_env}")
    adapter = GitHubForge if policy.kind == ForgeKind.GITHUB else GitLabForge
    return adapter(policy, token)


def pull_request_offer(task_id: int) -> ForgePullRequest | None:
    """Open the pull request of a task waiting for a person's review, if its project has
    a forge and none is open for it yet. A forge that fails is logged; the sweep tries
    again (``forge_sync``), and the task waits for review in SF either way."""
    task = Task.objects.select_related("plan__session__project").get(pk=task_id)
    if task.status != TaskStatus.REVIEW or not task.checkpoint_ref:
        return None
    if ForgePullRequest.objects.filter(task=task, state=PullRequestState.OPEN).exists():
        return None
    project = task.plan.session.project
    try:
        forge = forge_for(project)
        if forge is None:
            return None
        return _open(task, project, forge)
    except (ForgeError, GitError) as exc:
        logger.warning("pull request of %s not opened: %s", task.key, exc)
        return None


def _open(task: Task, project: Project, forge: Forge) -> ForgePullRequest:
    policy = project.parsed_policy.forge
    assert policy is not None
    ws = workspace_of(task)
    head = task.checkpoint_ref
    if not ws.remote:  # record mode: the checkpoint was pushed to the record, the forge's
        git(
            "push", "--force", policy.remote, f"{head}:refs/heads/{ws.branch}",
            cwd=ws.repo, remote=True,
        )  # fmt: skip
    opened = forge.open(
        branch=ws.branch, base=ws.base, title=f"sf: {task.key}: {task.title}", body=_body(task)
    )
    # A request reused for a second round: the reviews of the first were applied then.
    seen = [
        review
        for earlier in ForgePullRequest.objects.filter(task=task, number=opened.number)
        for review in earlier.seen_reviews
    ]
    return ForgePullRequest.objects.create(
        task=task, kind=forge.kind, number=opened.number, url=opened.url, branch=ws.branch,
        head=head, seen_reviews=seen,
    )  # fmt: skip


def _body(task: Task) -> str:
    criteria = "\n".join(f"- {cid}: {text}" for cid, text in task.criteria)
    verify = "\n".join(f"- `{command}`" for command in task.verify)
    return (
        f"{task.description}\n\n**Acceptance criteria**\n{criteria}\n\n"
        f"**Verify commands** (passed in SF)\n{verify}\n\n"
        "Review here: *Request changes* sends the task back to its agent with your "
        "comments; *Approve* merges it through SF."
    )


def forge_sync() -> int:
    """Read the reviews of open pull requests (and open the ones that failed to open);
    returns how many reviews were applied. Run by the engine's sweep: a forge that
    fails, answers garbage or a project whose policy no longer parses is logged for
    that pull request and the others go on."""
    applied = 0
    waiting = Task.objects.filter(status=TaskStatus.REVIEW).exclude(checkpoint_ref="")
    unopened = waiting.filter(pull_requests__isnull=True).select_related("plan__session__project")
    for task in unopened:
        if task.plan.session.project.policy.get("forge"):
            pull_request_offer(task.pk)
    for pull in ForgePullRequest.objects.filter(state=PullRequestState.OPEN).select_related(
        "task__plan__session__project"
    ):
        try:
            applied += _pull_sync(pull)
        except (SfError, GitError) as exc:
            logger.warning("reviews of %s not read: %s", pull, exc)
        except Exception:
            # A bug met on one project's answer must not stop the sweep (schedules,
            # notifications and the other projects' forges run after it).
            logger.exception("reviews of %s not read", pull)
    return applied


def _pull_sync(pull: ForgePullRequest) -> int:
    """Apply the fresh reviews of one open pull request; 1 when one was applied."""
    task = pull.task
    if task.status != TaskStatus.REVIEW:
        _close(pull, f"reviewed in SF ({task.status})")
        return 0
    forge = forge_for(task.plan.session.project)
    reviews = forge.reviews(pull.number) if forge else []
    fresh = [r for r in reviews if r.id not in pull.seen_reviews]
    pull.seen_reviews = [*pull.seen_reviews, *(r.id for r in fresh)]
    pull.save(update_fields=["seen_reviews"])
    asked = [r for r in fresh if r.state == "changes_requested"]
    if asked:
        who = Actor.system(f"{pull.kind}:{asked[0].author}")
        task_request_changes(task=task, actor=who, reason=_changes(asked))
        _close(pull, f"changes requested by {asked[0].author}")
        return 1
    if approved := [r for r in fresh if r.state == "approved"]:
        task_approve(task=task, actor=Actor.system(f"{pull.kind}:{approved[0].author}"))
        _close(pull, f"approved by {approved[0].author}")
        return 1
    return 0


def _changes(reviews: list[Review]) -> str:
    """The reviewers' words and line comments, as the next unit's brief shows them."""
    lines: list[str] = []
    for review in reviews:
        if review.body.strip():
            lines.append(review.body.strip())
        for comment in review.comments:
            where = f"{comment.path}:{comment.line}" if comment.line else comment.path
            lines.append(f"{where}: {comment.body.strip()}")
    return "\n".join(lines) or "changes requested (no comment)"


def _close(pull: ForgePullRequest, outcome: str) -> None:
    ForgePullRequest.objects.filter(pk=pull.pk).update(
        state=PullRequestState.DONE, outcome=outcome[:500]
    )
