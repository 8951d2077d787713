"""The SKILL.md frontmatter schema (DESIGN §7)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SIDE_EFFECTS = ("none", "code-edits", "repo-automation", "host-mutation", "production-mutation")


class SkillFrontmatter(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    description: str = Field(min_length=1, max_length=1000)
    user_invocable: bool = Field(default=True, alias="user-invocable")
    model_invocable: bool = Field(default=True, alias="model-invocable")
    side_effects: Literal[
        "none", "code-edits", "repo-automation", "host-mutation", "production-mutation"
    ] = Field(default="none", alias="side-effects")
    permission_profile: Literal["restricted", "normal", "trusted", "unrestricted"] = Field(
        default="restricted", alias="permission-profile"
    )
