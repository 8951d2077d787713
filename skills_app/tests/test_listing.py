"""The prompt's skills list stays within its share of the context window."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.models import Project
from skills_app.loader import (
    CHARS_PER_TOKEN,
    LIST_ALL,
    LIST_MAX,
    LIST_SHARE,
    skills_available,
    skills_listing,
)
from skills_app.sync import project_skills_sync
from skills_app.tests.helpers import write_skill

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("window", [8_192, 32_768, 128_000])
def test_the_list_with_its_heading_fits_its_share_of_the_window(
    project: Project, window: int
) -> None:
    repo = Path(project.repo_path)
    for index in range(60):
        write_skill(repo, f"skill-{index:02d}", description=f"Handle topic{index:02d} " + "x" * 120)
    project_skills_sync(project)
    listing = skills_listing(skills_available(project), "about topic07", window)
    assert len(listing) <= window * LIST_SHARE * CHARS_PER_TOKEN
    assert "\n- skill-07:" in listing  # the one the task's words point at
    assert listing.count("\n- ") == 1  # "handle" is in every skill: it says nothing
    assert listing.endswith('(59 more skills: load_skill search="words" finds them)')


def test_a_few_skills_are_all_listed_whatever_the_task(project: Project) -> None:
    repo = Path(project.repo_path)
    for index in range(LIST_ALL):
        write_skill(repo, f"skill-{index:02d}", description=f"Handle topic{index:02d}")
    project_skills_sync(project)
    listing = skills_listing(skills_available(project), "nothing in common", 128_000)
    assert listing.count("\n- ") == LIST_ALL
    assert "more skills" not in listing


def test_many_skills_list_at_most_the_best_few(project: Project) -> None:
    repo = Path(project.repo_path)
    for index in range(40):
        topic = "deploy" if index % 4 == 0 else f"topic{index:02d}"
        write_skill(repo, f"skill-{index:02d}", description=f"Handle {topic} here")
    write_skill(repo, "deploy-json", description="Deploy output as json")
    project_skills_sync(project)
    listing = skills_listing(skills_available(project), "deploy --json output", 128_000)
    lines = [line for line in listing.splitlines() if line.startswith("- ")]
    assert lines[0].startswith("- deploy-json:")  # three telling words beat one
    assert len(lines) == LIST_MAX
    none = skills_listing(skills_available(project), "unrelated words only", 128_000)
    assert none.splitlines()[1:] == ['(41 more skills: load_skill search="words" finds them)']
