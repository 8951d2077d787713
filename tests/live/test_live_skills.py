"""A real model meets a skill (``-m live_model``): the task names a house format that
only the project's skill spells out; the prompt lists the skill by its description, and
the model must load it through load_skill to learn the format.

Seen with Qwen2.5-Coder-1.5B on 2026-11-25: its first step loads the skill (a tool call
written as text, recognised), then it sometimes finishes without writing the file, so
the task may fail. What must hold: the skill was loaded lazily (its body reached the
model through the tool, recorded as a use of the skill) and the run ended cleanly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.models import TraceEvent
from skills_app.models import SkillUse
from tests.headless_runs import headless
from tests.live.conftest import LocalModel
from tests.live.test_live_model import TIMEOUT, assert_ended_cleanly
from tests.live.unattended import BOUNDS, answers_write, repo_make

pytestmark = [pytest.mark.live_model, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
RUNS = 2
# The skill is loaded in the first step; writing the one line and finishing take two
# more. Six steps leave room for a check, and end a lost run in minutes, not fifteen steps.
LIMITS = {**BOUNDS, "SF_UNIT_MAX_STEPS": "6"}
SKILL = """---
name: release-banner
description: Use when creating or changing banner.txt, the release banner of this project.
---
The release banner has a fixed house format. banner.txt holds exactly one line:

    *** SF release 7 ***

Three asterisks, a space, the words, a space, three asterisks. Nothing else in the file.
"""
PLAN = """summary: The release banner
intent: We need the release banner file.
tasks:
  - key: banner
    title: Create banner.txt in the project's release banner format
    description: Create the file banner.txt with the release banner for release 7, in the house format the project's release-banner skill describes.
    acceptance_criteria:
      - banner.txt holds the release banner in the house format
    verify:
      - grep -qx '\\*\\*\\* SF release 7 \\*\\*\\*' banner.txt
    risk_level: low
"""


def test_a_real_model_loads_the_skill_it_needs(local_model: LocalModel, tmp_path: Path) -> None:
    for attempt in range(1, RUNS + 1):
        repo = repo_make(
            {"README.md": "# notes\n", ".agents/skills/release-banner/SKILL.md": SKILL},
            tmp_path / f"banner-{attempt}",
        )
        plan = tmp_path / f"plan-{attempt}.yaml"
        plan.write_text(PLAN)
        run = headless(
            "--project", str(repo), "--plan-file", str(plan), "--autonomous",
            "--permission-profile", "trusted", "--output-format", "json",
            "--answers", str(answers_write(repo)),
            timeout=TIMEOUT, **local_model.environment(), **LIMITS,
        )  # fmt: skip
        session = assert_ended_cleanly(run, repo)
        loads = TraceEvent.objects.filter(
            unit__task__plan__session=session, kind="tool_call", name="load_skill"
        )
        loaded = [e for e in loads if "SF release 7" in str(e.payload.get("output", ""))]
        if loaded:
            break
    assert loaded, f"the model never loaded the skill in {RUNS} runs:\n{run.stderr[-3000:]}"
    uses = SkillUse.objects.filter(session=session, skill__name="release-banner", kind="load")
    assert uses.filter(allowed=True).exists()
    if run.code == 0:
        assert (repo / "banner.txt").read_text().strip() == "*** SF release 7 ***"
