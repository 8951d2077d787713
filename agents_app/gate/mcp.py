"""MCP tools in the gate: their risk class (from the project's policy) on the profile table.

An MCP tool is named ``mcp__<server>__<tool>`` and comes with the risk class the
project's policy gives it (``agents_app.mcp_schemas.McpRisk``), or none:

| class       | restricted     | normal | trusted | unrestricted |
| ----------- | -------------- | ------ | ------- | ------------ |
| read        | allow          | allow  | allow   | allow        |
| write       | deny (hidden)  | allow  | allow   | allow        |
| external    | deny (hidden)  | ask    | allow   | allow        |
| destructive | deny (hidden)  | ask    | ask     | ask          |
| (none)      | ask            | ask    | ask     | ask          |

``write`` is mutation of the workspace (the ``normal`` row of DESIGN §5), ``external``
is a side effect beyond the machine, which the ``normal`` profile does not grant;
``destructive`` is the safety harness's: a person confirms each call under every
profile, and only an approval of that very call lifts it. A tool the profile can never
use is hidden from the model (layer 1). Deny rules match the tool's name and its
string arguments and always win; allow rules lift the profile's asks (and an unclassed
tool's), as do a reviewer's approvals: exactly this call, or every call of the tool
(its "family") for the session or the project.
"""

from __future__ import annotations

import json
from typing import Any

from agents_app.axes import PROFILE_ORDER
from agents_app.gate.verdicts import Profile, Verdict

MCP_PREFIX = "mcp__"
R, N, T, U = PROFILE_ORDER
UNCLASSED = ""  # a tool the policy gives no risk class: it asks

# The lowest profile allowed without asking, by class; "" for the destructive ones.
_FLOOR = {"read": R, "write": N, "external": T}
_WHAT = {
    "read": "reads through an MCP server",
    "write": "changes the workspace through an MCP server",
    "external": "changes something outside this machine through an MCP server",
}


def is_mcp(tool: str) -> bool:
    return tool.startswith(MCP_PREFIX)


def risk_class(risk: str) -> str:
    """The gate's risk class of an MCP tool of class ``risk`` (stored on decisions)."""
    return f"mcp-{risk or 'unclassed'}"


def mcp_hidden(risk: str, profile: str) -> bool:
    """Layer 1: the profile can never use a tool of this class (restricted: only reads
    and the unclassed, which a person may approve)."""
    return profile == R and risk not in ("read", UNCLASSED)


def mcp_offered(profile: str, risks: dict[str, str]) -> list[str]:
    """The MCP tools shown to the model under ``profile``."""
    return [tool for tool, risk in risks.items() if not mcp_hidden(risk, profile)]


def mcp_verdict(tool: str, risk: str, profile: str) -> Verdict:
    """The verdict of the profile table (the module's table) on one call of ``tool``."""
    klass = risk_class(risk)
    if risk == UNCLASSED:
        reason = f"{tool} has no risk class in the project's policy (mcp.tools); a person decides."
        return Verdict("ask", "mcp.unclassed", klass, reason, "rule", tool, tool)
    if risk == "destructive":
        if profile == R:
            reason = f"{tool} cannot be undone; the restricted profile does not allow it."
            return Verdict("deny", f"profile.{R}.mcp-destructive", klass, reason)
        reason = (
            f"`{tool}` cannot be undone (destructive); a person confirms it under every profile."
        )
        return Verdict("ask", "harness.destructive.mcp", klass, reason, "approved", tool)
    what = f"{tool} {_WHAT[risk]}"
    return Profile(profile).floor(_FLOOR[risk], f"mcp-{risk}", klass, what, tool).of_family(tool)


def mcp_subjects(tool: str, arguments: dict[str, Any]) -> list[str]:
    """What deny rules are matched against: the tool's name and its string arguments."""
    return [tool, *(value for value in arguments.values() if isinstance(value, str))]


def mcp_approval_subject(arguments: dict[str, Any]) -> str:
    """An exact approval of an MCP call: its arguments as canonical JSON."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def family_approvable(tool: str, risk_class_stored: str) -> bool:
    """May a reviewer approve every call of ``tool`` at once? Not a destructive one."""
    return is_mcp(tool) and risk_class_stored != risk_class("destructive")
