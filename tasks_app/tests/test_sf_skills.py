"""SF's own skills (.agents/skills/) pass their eval cases on the replayed traces shipped
with them (hand-written: tests/fixtures/build_sf_skill_traces.py). This is the CI run
of ``sf skills eval --replay``."""

from __future__ import annotations

import json
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from agents_app.services import project_create
from skills_app.parsing import PROJECT_SKILLS

pytestmark = pytest.mark.django_db
OWN_SKILLS = Path(settings.BASE_DIR) / PROJECT_SKILLS


def test_sfs_own_skills_pass_their_evals_on_replay(tmp_path: Path) -> None:
    repo = tmp_path / "sf"
    shutil.copytree(OWN_SKILLS, repo / PROJECT_SKILLS)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "skills"]):
        subprocess.run([*git, *args], cwd=repo, check=True)
    project_create(name="sf itself", repo_path=str(repo))
    out = StringIO()
    try:
        call_command(
            "sf",
            "skills",
            "eval",
            "--project",
            "sf itself",
            "--replay",
            "--output-format",
            "json",
            stdout=out,
        )
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    result = json.loads(out.getvalue().splitlines()[-1])
    failed = [
        (r["skill"], r["case"], r["grades"], r["error"]) for r in result["runs"] if not r["passed"]
    ]
    assert not failed, failed
    assert code == 0
    skills = {r["skill"] for r in result["runs"]}
    assert skills >= {"gate-rules", "engine-dispatch-points", "headless-contract"}
