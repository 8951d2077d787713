"""The MCP servers of skills: each offered skill's ``mcp.json``, read for one unit.

A skill's servers start for every unit in which the skill is on offer to the model
(valid, model-invocable, not production-mutation), when the unit starts, whether or
not the model loads the skill: the tools must be known before the first model step,
and starting a server later would change the tools in the middle of a conversation.
The project's policy may turn skills' servers off (``mcp.skill_servers: false``).

The file is read from where the skill was synced — the project's repository or the
user folder — never from the unit's worktree, which the agent may have changed: a
server is a command SF starts without asking the gate (inside the sandbox, like the
verify commands). ``${SKILL_DIR}`` in ``command`` or ``args`` is the skill's folder: in
the worktree for a project skill, the user folder (shown read-only to the server) for
a user skill.
"""

from __future__ import annotations

from pathlib import Path

from agents_app.mcp_schemas import McpConfigInvalid, mcp_json_parse
from agents_app.runtime.mcp_unit import ServerEntry
from skills_app.loader import SkillLoader
from skills_app.models import Skill, SkillScope
from skills_app.parsing import MAX_FILE_BYTES, MCP_FILE

SKILL_DIR = "${SKILL_DIR}"


def skill_mcp_entries(loader: SkillLoader) -> tuple[list[ServerEntry], list[tuple[str, str]]]:
    """The servers of the skills ``loader`` offers, and (file, problem) for each
    ``mcp.json`` that cannot be used."""
    entries: list[ServerEntry] = []
    problems: list[tuple[str, str]] = []
    for skill in loader.offered():
        if not any(path == MCP_FILE for path, _ in skill.files):
            continue
        source, folder = _where(skill, loader)
        try:
            servers = mcp_json_parse(_read(source), source=_shown(skill))
        except (OSError, McpConfigInvalid) as exc:
            problems.append((_shown(skill), str(exc).removeprefix(f"{_shown(skill)}: ")))
            continue
        expose = (folder,) if skill.scope == SkillScope.USER else ()
        for name, server in servers.items():
            placed = server.model_copy(
                update={
                    "command": server.command.replace(SKILL_DIR, str(folder)),
                    "args": [arg.replace(SKILL_DIR, str(folder)) for arg in server.args],
                }
            )
            entries.append(
                ServerEntry(name, placed, f"skill {skill.name}", skill=skill.name, expose=expose)
            )
    return entries, problems


def _where(skill: Skill, loader: SkillLoader) -> tuple[Path, Path]:
    """The mcp.json to read, and the folder ``${SKILL_DIR}`` names."""
    if skill.scope == SkillScope.USER:
        folder = Path(skill.folder)
        return folder / MCP_FILE, folder
    return loader.repo / skill.folder / MCP_FILE, loader.worktree / skill.folder


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise OSError(f"more than the {MAX_FILE_BYTES} bytes allowed")
    return raw.decode("utf-8", errors="replace")


def _shown(skill: Skill) -> str:
    return f"{skill.folder}/{MCP_FILE}"
