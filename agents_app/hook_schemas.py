"""The project's hooks: commands its policy declares around a unit's work (docs/hooks.md).

Each hook has a trigger (before a tool call, after one, before the verify commands,
when the agent calls ``finish``, when a unit's agent session starts), a command (run
in the OS sandbox once the permission gate allowed it, like an agent's ``run_command``),
what its output may do (``block`` with the reason the model sees, ``note`` for the
model's next step, ``none``), a timeout and how often it may run in one unit.

A hook is declared in the project's policy, never in the repository: what runs around
the agent is a decision of the people who may edit the policy, and an agent cannot
declare one by writing a file of its worktree.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

HOOK_NAME = r"^[a-z0-9][a-z0-9_-]{0,62}$"
TOOL_PATTERN = r"^[A-Za-z0-9_.*?\[\]-]{1,100}$"
MAX_HOOKS = 50


class HookTrigger(StrEnum):
    PRE_TOOL = "pre_tool"  # a tool call the gate allowed, right before it runs
    POST_TOOL = "post_tool"  # a tool call that ran, before the model's next step
    PRE_VERIFY = "pre_verify"  # before the task's verify commands
    UNIT_STOP = "unit_stop"  # the agent called finish
    SESSION_START = "session_start"  # a unit's agent session, before its first step


class HookOutput(StrEnum):
    """What a hook's output may do. ``block`` blocks when the hook exits 2 (the code
    Claude Code's hooks use), with its output as the reason; ``note`` gives its output
    to the model at its next step; ``none``: only the trace shows it."""

    BLOCK = "block"
    NOTE = "note"
    NONE = "none"


# The triggers a hook may block at, and the ones a tool matcher applies to.
BLOCKING = frozenset({HookTrigger.PRE_TOOL, HookTrigger.PRE_VERIFY, HookTrigger.UNIT_STOP})
TOOL_TRIGGERS = frozenset({HookTrigger.PRE_TOOL, HookTrigger.POST_TOOL})


class Hook(BaseModel):
    """One hook of the project's policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=HOOK_NAME)
    trigger: HookTrigger
    command: str = Field(min_length=1, max_length=4000)
    # pre_tool and post_tool only: the tools it runs for (names, or globs such as
    # ``mcp__*``; none: every tool), and a regular expression a run_command's command
    # must contain (set: only run_command calls whose command matches).
    match_tools: list[str] = Field(default_factory=list, max_length=50)
    match_command: str | None = Field(default=None, min_length=1, max_length=500)
    output: HookOutput = HookOutput.NOTE
    timeout_s: int = Field(default=60, ge=1, le=600)
    max_runs: int = Field(default=50, ge=1, le=1000)  # in one unit; then it is skipped

    @field_validator("command")
    @classmethod
    def _not_blank(cls, command: str) -> str:
        if not command.strip():
            raise ValueError("a hook's command must not be blank")
        return command

    @field_validator("match_tools")
    @classmethod
    def _tool_patterns(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if not re.match(TOOL_PATTERN, pattern):
                raise ValueError(
                    f"match_tools entry {pattern!r} is not a tool name or glob "
                    "(letters, digits, _ . - and the glob characters * ? [ ])"
                )
        return patterns

    @field_validator("match_command")
    @classmethod
    def _regex(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"match_command is not a regular expression: {exc}") from None
        return pattern

    @model_validator(mode="after")
    def _fits_trigger(self) -> Hook:
        matches = bool(self.match_tools or self.match_command)
        if matches and self.trigger not in TOOL_TRIGGERS:
            raise ValueError(
                f"hook {self.name}: match_tools and match_command apply to pre_tool and "
                f"post_tool hooks, not {self.trigger}"
            )
        if self.output == HookOutput.BLOCK and self.trigger not in BLOCKING:
            raise ValueError(
                f"hook {self.name}: a {self.trigger} hook cannot block (only pre_tool, "
                "pre_verify and unit_stop hooks can); use output note or none"
            )
        return self


def hooks_problem(hooks: list[Hook]) -> str:
    """Why a policy's list of hooks is refused ('' when it is not)."""
    if len(hooks) > MAX_HOOKS:
        return f"at most {MAX_HOOKS} hooks, not {len(hooks)}"
    names = [hook.name for hook in hooks]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        return f"hook names must be unique: {', '.join(twice)} used more than once"
    return ""
