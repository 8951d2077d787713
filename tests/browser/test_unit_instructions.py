"""The unit page in Chromium shows the repository's instruction files the unit's prompt
held: which, their sizes, which was cut, which was refused, and the section in the
trace."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from agents_app.tests.runtime_helpers import ScriptedModel
from conftest import grant
from tasks_app.engine.replaying import demo_repo_create
from tasks_app.models import Unit
from tasks_app.tests.test_engine import run_next, start, task_spec, writes
from tests.browser.conftest import logged_in_page
from tests.processes import WebProcess

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
LONG = "".join(f"- rule {n}: keep functions short\n" for n in range(3000))  # ~90 KB


def repo_with_instructions(path: Path) -> Path:
    repo = demo_repo_create(path)
    (repo / "AGENTS.md").write_text(LONG)
    (repo / "CLAUDE.md").symlink_to("/etc/hostname")  # out of the worktree: refused
    (repo / "sub").mkdir()
    (repo / "sub" / "AGENTS.md").write_text("Files here are lower case. SUB-MARKER\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "rules"],
        cwd=repo,
        check=True,
    )
    return repo


@pytest.fixture
def unit_id(tmp_path: Path, user: User) -> int:
    """A unit that ran on that repository (before Playwright's loop starts: the
    database is not used from inside it); ``user`` may view its project."""
    repo = repo_with_instructions(tmp_path / "greet")
    spec = task_spec(intent_claim=["sub/hello.txt"], verify=["grep -q hello sub/hello.txt"])
    session, plan = start(repo, spec)
    grant(user, session.project, "viewer")
    assert run_next(session, ScriptedModel(*writes("hello", "sub/hello.txt"))).task_status == "done"
    return Unit.objects.get(task__plan=plan).pk


def test_the_unit_page_shows_the_instruction_files(
    unit_id: int, user: User, web: WebProcess, browser: Browser
) -> None:
    page = logged_in_page(browser, web, user, f"/units/{unit_id}/")

    card = page.locator("#unit-instructions")
    expect(card.locator("h2")).to_have_text("Repository instructions")
    rows = card.locator("tr[data-instruction-file]")
    expect(rows).to_have_count(3)
    root = card.locator('tr[data-instruction-file="AGENTS.md"]')
    expect(root).to_have_attribute("data-cut", "yes")
    expect(root).to_contain_text(f"{len(LONG.encode())} bytes")
    expect(root).to_contain_text("cut:")
    claude = card.locator('tr[data-instruction-file="CLAUDE.md"]')
    expect(claude).to_contain_text("not read: a link to outside the worktree")
    expect(claude).to_contain_text("/etc/hostname")
    sub = card.locator('tr[data-instruction-file="sub/AGENTS.md"]')
    expect(sub).to_have_attribute("data-cut", "no")
    expect(sub).to_contain_text("whole")
    # The trace holds the section the model got, the sub-directory's rules in it.
    note = page.locator('#unit-trace li[data-kind="note"]').first
    expect(note).to_contain_text("instruction files: AGENTS.md, CLAUDE.md, sub/AGENTS.md")
    note.locator("summary").first.click()
    expect(note).to_contain_text("SUB-MARKER")
    expect(note).to_contain_text("read_file AGENTS.md for the rest")
    page.screenshot(path="/tmp/unit-instructions.png", full_page=True)
