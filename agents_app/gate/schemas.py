"""What the gate is asked and what it answers: a tool call in a session's context, and
the decision with the rule that made it. Plain pydantic values: no database."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agents_app.axes import PermissionProfile, RunControl, WorkMode


class Rule(BaseModel):
    """An allow or deny rule: a glob on the command (run_command) or on the path."""

    model_config = ConfigDict(frozen=True)
    tool: str = "*"
    pattern: str
    reason: str | None = None


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


class Decision(BaseModel):
    decision: Literal["allow", "ask", "deny"]
    rule: str
    risk_class: str
    reason: str
