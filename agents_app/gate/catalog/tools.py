"""The agent's tools: each with its side effect and the lowest profile offered it.

Every built-in tool has a use allowed under ``restricted`` (``write_file``/``edit_file``
for planning artifacts, ``run_command`` for ``git log`` or ``curl``), so none is hidden
and each call is decided on its own. A tool added later (deploy) sets a higher
``min_profile`` and ``tools_for_profile`` hides it from the model (DESIGN §5, layer 1).
MCP tools are not in this catalog: a unit learns them from its servers, and
``gate.mcp`` hides and judges them by the risk class the project's policy gives them.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents_app.axes import PROFILE_ORDER, profile_rank

R = PROFILE_ORDER[0]  # restricted: every built-in tool has a use allowed there


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    side_effect: str  # none | read | write | exec
    min_profile: str
    path_keys: tuple[str, ...] = ()  # input keys that hold paths


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec("read_file", "read", R, ("path",)),
        ToolSpec("list_dir", "read", R, ("path",)),
        ToolSpec("glob", "read", R, ("path",)),
        ToolSpec("grep", "read", R, ("path",)),
        ToolSpec("write_file", "write", R, ("path",)),
        ToolSpec("edit_file", "write", R, ("path",)),
        ToolSpec("run_command", "exec", R, ("cwd",)),
        ToolSpec("load_skill", "none", R),
        ToolSpec("ask_user", "none", R),
        ToolSpec("finish", "none", R),
    )
}


def tools_for_profile(profile: str, catalog: dict[str, ToolSpec] | None = None) -> list[str]:
    """Names of the tools offered to the model under ``profile`` (layer 1)."""
    rank = profile_rank(profile)
    specs = (catalog or TOOLS).values()
    return [spec.name for spec in specs if profile_rank(spec.min_profile) <= rank]
