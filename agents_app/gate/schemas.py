"""What the gate is asked and what it answers: a tool call in a session's context, and
the decision with the rule that made it. Plain pydantic values: no database."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents_app.axes import PermissionProfile, RunControl, WorkMode


class Rule(BaseModel):
    """An allow or deny rule on the command (run_command) or on the path.

    A project's policy rules are globs a person wrote (``match="glob"``). A reviewer's
    approval is never a glob: ``exact`` matches the call as the reviewer saw it (its
    ``approval_subject``), ``family`` every command of a declared family the reviewer
    chose (``pytest``, ``npm test`` …), lifting only that family's profile ask.
    """

    model_config = ConfigDict(frozen=True)
    tool: str = "*"
    pattern: str
    reason: str | None = None
    match: Literal["glob", "exact", "family"] = "glob"


class PolicyRules(BaseModel):
    allow: list[Rule] = Field(default_factory=list)
    deny: list[Rule] = Field(default_factory=list)


class ToolCall(BaseModel):
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)


class GateContext(BaseModel):
    permission_profile: PermissionProfile
    run_control: RunControl
    work_mode: WorkMode
    worktree: Path
    rules: PolicyRules = Field(default_factory=PolicyRules)
    approved_rules: list[Rule] = Field(default_factory=list)
    # The minimum profile of each skill the unit may load (name → profile): loading one
    # above the session's profile asks.
    skill_profiles: dict[str, PermissionProfile] = Field(default_factory=dict)
    # The unit's MCP tools (``mcp__<server>__<tool>``) and the risk class the project's
    # policy gives each ("" when none: it asks), ``agents_app.gate.mcp``.
    mcp_tools: dict[str, str] = Field(default_factory=dict)


class Decision(BaseModel):
    decision: Literal["allow", "ask", "deny"]
    rule: str
    risk_class: str
    reason: str
