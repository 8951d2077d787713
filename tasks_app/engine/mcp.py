"""The MCP servers of a unit, from the project's policy and its skills (docs/agent-mcp.md).

Started when the unit starts, in its sandbox under the session's profile and the
project's egress, and stopped when the unit ends on every path (the caller holds the
context manager around the agent loop). What starts and what fails is in the trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agents_app.models import AgentSession
from agents_app.runtime.mcp_unit import UnitMcp, policy_entries, unit_mcp
from agents_app.runtime.sandbox import policy_for
from agents_app.runtime.trace import TraceRecorder
from skills_app.loader import SkillLoader
from skills_app.mcp import skill_mcp_entries


@contextmanager
def unit_mcp_servers(
    *, session: AgentSession, skills: SkillLoader, worktree: Path, recorder: TraceRecorder
) -> Iterator[UnitMcp]:
    """The servers of ``session``'s project and of the skills ``skills`` offers, running
    until the block ends; ``load_skill`` learns what became of each skill's servers."""
    policy = session.project.parsed_policy
    entries = policy_entries(policy.mcp)
    problems: list[tuple[str, str]] = []
    if policy.mcp.skill_servers:
        found, problems = skill_mcp_entries(skills)
        entries += found
    with unit_mcp(
        entries=entries,
        problems=problems,
        policy=policy.mcp,
        worktree=worktree,
        sandbox=policy_for(session.permission_profile, policy.egress, policy.sandbox),
        recorder=recorder,
    ) as mcp:
        skills.mcp_notes = mcp.skill_notes()
        yield mcp
