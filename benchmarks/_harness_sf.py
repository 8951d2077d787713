"""Why an SF run failed, from what SF itself recorded: the headless result (stream-json),
the session's units, task moves and trace in the database.

The categories (the first that applies is the cause; every one seen is a signal):

* ``planning`` — no unit ever started (the plan failed, was refused or never came);
* ``timeout`` — the cap passed while units were running;
* ``gate refusal`` — the gate denied or asked (unattended: refused) a tool call or a
  verify command;
* ``verify misconfigured`` — a verify command that cannot work (not found, no tests,
  a usage error) rather than a check that found the work wrong;
* ``tool-call format`` — calls SF could not read (refused text calls, unknown tools,
  arguments that do not validate, ``no_progress``);
* ``wrong path`` — tools pointed at files that do not exist;
* ``edit mismatch`` — an edit whose search text is not in the file;
* ``other`` — none of these.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

CAUSES = (
    "planning",
    "timeout",
    "gate refusal",
    "verify misconfigured",
    "tool-call format",
    "wrong path",
    "edit mismatch",
)
EVIDENCE = {
    "gate refusal": re.compile(r"not run: the gate says|\"decision\": \"(deny|ask)\"", re.I),
    "verify misconfigured": re.compile(
        r"verify:.*(command not found|no such file or directory|file or directory not found"
        r"|no tests ran|usage:|error: unrecognized arguments|can't open file)",
        re.I | re.S,
    ),
    "tool-call format": re.compile(
        r"tool call in the text refused|unknown tool|must be a JSON object|validation error"
        r"|field required|no_progress|without tools",
        re.I,
    ),
    "wrong path": re.compile(r": no such file\b|no such file or directory|is not a file", re.I),
    "edit mismatch": re.compile(r"`search` must be text already in the file|no match|ambiguous"),
}


def stream_result(log: Path) -> dict[str, Any]:
    """The headless ``result`` event of a stream-json log ({} if it never came)."""
    result: dict[str, Any] = {}
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"type":"result"' in line.replace(" ", ""):
            try:
                result = json.loads(line)
            except ValueError:
                continue
    return result


def evidence(repo: Path) -> tuple[int, str]:
    """Units started and the text of what went wrong, for the session on ``repo``."""
    from _common import django_team_mode

    django_team_mode()
    from agents_app.models import AgentSession, TraceEvent
    from tasks_app.models import TaskTransition, Unit

    session = AgentSession.objects.filter(project__repo_path=str(repo.resolve())).last()
    if session is None:
        return 0, ""
    units = list(Unit.objects.filter(task__plan__session=session))
    parts = [f"unit {u.status}: {u.summary}\nverify: {u.verification_output}" for u in units]
    moves = TaskTransition.objects.filter(task__plan__session=session)
    parts += [f"move {m.to_status}: {m.reason}" for m in moves]
    for event in TraceEvent.objects.filter(session=session).exclude(kind="model_step"):
        parts.append(f"{event.kind} {event.name}: {json.dumps(event.payload)[:2000]}")
    for event in TraceEvent.objects.filter(session=session, kind="model_step"):
        parts += [f"note: {n}" for n in event.payload.get("notes") or []]
    return len(units), "\n".join(parts)


def classify(units: int, text: str, result: dict[str, Any], timed_out: bool) -> dict[str, Any]:
    """The cause of a failed run and every signal seen."""
    signals = [name for name, pattern in EVIDENCE.items() if pattern.search(text)]
    if timed_out or result.get("status") == "timeout":
        signals.insert(0, "timeout")
    if units == 0:
        signals.insert(0, "planning")
    cause = next((c for c in CAUSES if c in signals), "other")
    return {
        "cause": cause,
        "signals": signals,
        "status": result.get("status", "none"),
        "reason": str(result.get("reason", ""))[:300],
        "waiting_for": result.get("waiting_for", []),
    }
