from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _user_skills(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user-level skill folder of every test here is its own, never ~/.sf/skills."""
    folder = tmp_path / "user-skills"
    monkeypatch.setenv("SF_USER_SKILLS", str(folder))
    return folder
