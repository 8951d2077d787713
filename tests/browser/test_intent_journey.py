"""Journey (a) of issue 13, as a person does it, on real PostgreSQL, Redis, a Celery
worker and Chromium, with the model replayed from a trace (no live model is set):
create a project → new session → type an intent → the plan appears live → Run
autonomously → the board → the unit needs an approval → approve → the task reaches
review → open the unit from the board → the coloured diff → Approve and merge → the
session is done and its badge still. At 1280 px and at 390 px (no sideways scroll).
Screenshots: /tmp/intent-journey-<width>-<step>.png.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect

from tasks_app.engine.replaying import demo_repo_create
from tasks_app.tests.intent_traces import INTENT, intent_trace
from tests.browser.conftest import PASSWORD, doc_shot
from tests.processes import WebProcess, WorkerProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
NO_MODELS = {"SF_MODEL_FAST": "", "SF_MODEL_SMART": "", "SF_MODEL_DEEP": ""}
SLOW = 90_000  # ms: a unit on a loaded two-core machine


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    folder.mkdir()
    intent_trace(folder / "hello-journey.jsonl")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return demo_repo_create(tmp_path / "greet")


@pytest.fixture
def reviewer(user: User) -> User:
    """The person of the journey registers the project (so becomes its admin, who may
    review risk decisions): a superuser, as the first person of an install is."""
    User.objects.filter(pk=user.pk).update(is_staff=True, is_superuser=True)
    return user


@pytest.fixture
def worker(traces: Path) -> Iterator[WorkerProcess]:
    process = WorkerProcess(
        extra_env={**NO_MODELS, "SF_REPLAY_TRACES": str(traces), "SF_REPLAY_PACE": "1s"}
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def web(
    transactional_db: None, worker: WorkerProcess, traces: Path, tmp_path: Path
) -> Iterator[WebProcess]:
    """SF's web process, sending planning and units to the worker's queue."""
    server = WebProcess(
        extra_env={
            **NO_MODELS,
            "SF_REPLAY_TRACES": str(traces),
            "SF_CELERY_QUEUE": worker.queue,
            "SF_REPO_ROOTS": str(tmp_path.resolve()),  # where the journey's repository is
        }
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Journey:
    def __init__(self, page: Page, web: WebProcess, width: int) -> None:
        self.page, self.web, self.width, self.step = page, web, width, 0

    def look(self, name: str, doc: str = "") -> None:
        """A screenshot of this step; on a phone, the page must not scroll sideways.
        ``doc``: the step is also one of docs/journey.md's pictures (wide screen only)."""
        self.step += 1
        if doc and self.width == 1280:
            doc_shot(self.page, doc)
        self.page.wait_for_timeout(300)
        path = f"/tmp/intent-journey-{self.width}-{self.step:02d}-{name}.png"
        self.page.screenshot(path=path, full_page=True)
        widths = self.page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"{name} scrolls sideways at {self.width}px: {widths}"


@pytest.mark.parametrize("width", [1280, 390])
def test_intent_to_merged_change(
    width: int, reviewer: User, repo: Path, web: WebProcess, browser: Browser
) -> None:
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(web.url + "/projects/")
    page.fill("input[name=username]", reviewer.get_username())
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(web.url + "/projects/")
    journey = Journey(page, web, width)
    new_session(journey, repo)
    plan_from_intent(journey)
    run_until_approval(journey)
    review_and_merge(journey)
    session_done(journey)
    log = subprocess.run(
        ["git", "log", "--format=%s", "main"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert log.stdout.splitlines()[0] == "sf: merge hello: Write hello.txt"
    assert (repo / "hello.txt").read_text() == "hello\n"


def new_session(journey: Journey, repo: Path) -> None:
    """Create a project, then a new session on it."""
    page = journey.page
    page.fill("input[name=name]", "greeter")
    page.fill("input[name=repo_path]", str(repo))
    page.click("form:has(input[name=repo_path]) button[type=submit]")
    expect(page.locator("h1")).to_contain_text("greeter")
    journey.look("project")
    page.click("text=Start session")
    expect(page.locator("#session-page")).to_be_visible()


def plan_from_intent(journey: Journey) -> None:
    """The intent box says before the click that no model is set and offers the replay;
    planning runs on the worker and the list follows live: planning, then the plan."""
    page = journey.page
    box = page.locator("#intent-box")
    expect(box.locator("[data-preflight]")).to_contain_text("set SF_MODEL_DEEP")
    expect(box.locator("#intent-replay")).to_have_value("hello-journey.jsonl")
    expect(page.locator("[data-no-plans]")).to_be_visible()
    page.wait_for_timeout(500)  # the plans slot's websocket connects
    journey.look("session-new", doc="01-intent")
    page.fill("#intent-text", INTENT)
    page.click("#intent-submit")
    expect(page.locator("[data-intent-message]")).to_contain_text("Planning")
    expect(page.locator('#plans-list [data-plan-request][data-status="planning"]')).to_be_visible()
    journey.look("planning")
    review = page.locator("#plans-list [data-review-plan]")
    expect(review).to_be_visible(timeout=SLOW)
    expect(page.locator("#plans-list [data-plan-request]")).to_have_count(0)
    journey.look("plan-proposed", doc="03-plan-proposed")
    review.click()
    # The plan page: the units will answer from the trace, so Run autonomously is open.
    expect(page.locator("[data-replaying]")).to_be_visible()
    expect(page.locator("[data-preflight]")).to_have_count(0)
    journey.look("plan", doc="06-plan-run")


def run_until_approval(journey: Journey) -> None:
    """Run autonomously; on the board the unit asks to push, which needs a person under
    the normal profile; approve it in the queue; the next unit takes it to review."""
    page, web = journey.page, journey.web
    page.click("#run-autonomously")
    page.wait_for_url("**/tasks/?session=*")
    row = page.locator('tr[data-task="hello"]')
    expect(row).to_have_attribute("data-status", "blocked", timeout=SLOW)
    expect(row).to_contain_text("approval needed")
    journey.look("board-blocked", doc="09-board-approval")
    board = page.url
    page.goto(web.url + "/approvals/")
    decision = page.locator("tr[data-decision]")
    expect(decision).to_contain_text("git push origin main")
    journey.look("approvals", doc="10-approvals")
    decision.locator('button[value="approve"]').click()
    expect(page.locator("tr[data-decision]")).to_have_count(0)
    page.goto(board)
    expect(row).to_have_attribute("data-status", "review", timeout=SLOW)
    journey.look("board-review")


def review_and_merge(journey: Journey) -> None:
    """Open the unit from the board, read the coloured diff, Approve and merge."""
    page = journey.page
    page.locator('tr[data-task="hello"] a[data-unit-link]').first.click()
    diff = page.locator("#unit-diff details.diff-file")
    expect(diff).to_have_count(1)
    expect(diff).to_have_attribute("data-path", "hello.txt")
    added = page.locator("#unit-diff tr.diff-add td.code").first
    expect(added).to_contain_text("hello")
    colour = added.evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour == "rgba(79, 209, 139, 0.12)", colour  # green, not plain text
    journey.look("unit-review", doc="16-unit-review")
    page.click("#approve-merge")
    expect(page.locator("#unit-state [data-task-status]")).to_have_text("done", timeout=SLOW)
    journey.look("unit-merged", doc="17-unit-merged")


def session_done(journey: Journey) -> None:
    """The session is completed, and its badge no longer pulses."""
    page = journey.page
    page.click("#unit-state a:text('board')")
    page.goto(page.url.replace("/tasks/?session=", "/sessions/") + "/")
    expect(page.locator("h1")).to_contain_text("completed")
    badge = page.locator("#mode-badge")
    expect(badge).to_have_attribute("data-finished", "completed")
    expect(badge.locator(".pulse")).to_have_count(0)
    expect(page.locator('#plans-list [data-plan][data-status="done"]')).to_be_visible()
    journey.look("session-done")
