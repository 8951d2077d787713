"""The prompt's skills list stays within its share of the context window."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.models import Project
from skills_app.loader import CHARS_PER_TOKEN, LIST_SHARE, skills_available, skills_listing
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
    assert "\n- skill-07:" in listing  # the closest to the task first
    if listing.count("\n- ") < 60:
        assert listing.endswith('search="some words")')  # the rest are found by words
