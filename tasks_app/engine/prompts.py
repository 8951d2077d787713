"""The prompt of a unit: task spec, acceptance criteria, the repository's instructions,
skills, and what came before."""

from __future__ import annotations

from typing import Any

from agents_app.models import TraceEvent, TraceKind
from tasks_app.models import (
    DiffComment,
    MergeRequest,
    MergeStatus,
    ModelReview,
    Task,
    TaskStatus,
    TaskTransition,
    Unit,
    UnitStatus,
)

SYSTEM = """You are a coding agent working for SF in a git worktree of the project.
Work only through the tools, one call at a time. Read a file before you change it:
edit_file's search text must be copied exactly from the file. Make the smallest change
that meets every acceptance criterion, run the verify commands yourself before you
finish, and call finish with a summary of what you changed and how each criterion is
met. You may create and change any file in the worktree without asking; ask the person
(ask_user) only for a decision the task leaves open."""

# The compact prompt profile's (a small model's): the same rules, in fewer tokens.
SYSTEM_COMPACT = """You are a coding agent in a git worktree. Use one tool call per answer.
Read a file before you change it. Make the smallest change that meets every acceptance
criterion, run the verify commands, then call finish with a short summary."""

MAX_PREVIOUS_OUTPUT = 6000
MAX_PREVIOUS_SUMMARY = 1000
MAX_PREVIOUS_DIFF = 4000  # characters of the last attempt's diff in a retry's brief
MAX_REFUSALS = 5
MAX_BRIEFING_EVENTS = 40


def unit_messages(
    *,
    task: Task,
    skills: str,
    previous: Unit | None,
    compact: bool = False,
    instructions: str = "",
    followups: str = "",
) -> list[dict[str, Any]]:
    """A fresh conversation for a new unit of ``task`` (``compact``: a small model's)."""
    return [
        {"role": "system", "content": SYSTEM_COMPACT if compact else SYSTEM},
        {"role": "user", "content": task_brief(task, skills, previous, instructions, followups)},
    ]


def task_brief(
    task: Task, skills: str, previous: Unit | None, instructions: str = "", followups: str = ""
) -> str:
    """The task, its criteria and verify commands, the repository's ``instructions``
    (``agents_app.runtime.instructions``: said to be the repository's, not the
    person's), the ``skills`` section (the list and what people invoked,
    ``skills_app.loader``), what the last attempt left, and last, the ``followups``
    people sent since (``engine.followups.followups_brief``)."""
    parts = [f"# Task {task.key}: {task.title}"]
    if task.description:
        parts.append(task.description)
    parts.append(
        "## Acceptance criteria\n" + "\n".join(f"- {cid}: {text}" for cid, text in task.criteria)
    )
    parts.append(
        "## Verify commands (all must pass)\n" + "\n".join(f"- `{cmd}`" for cmd in task.verify)
    )
    if task.intent_claim:
        parts.append(
            "## Files you intend to touch\n" + "\n".join(f"- {path}" for path in task.intent_claim)
        )
    if instructions:
        parts.append(instructions)
    if skills:
        parts.append(skills)
    if previous is not None:
        parts.append(_previous_attempt(previous))
    if followups:
        parts.append(followups)
    return "\n\n".join(parts)


def _previous_attempt(unit: Unit) -> str:
    if unit.status == UnitStatus.CRASHED:
        return "## Recovery briefing\n" + recovery_briefing(unit)
    review = changes_requested_after(unit)
    if review is not None:
        return review_briefing(unit, review)
    sent_back = merge_sent_back_after(unit)
    if sent_back is not None:
        return merged_tree_briefing(unit, sent_back)
    output = unit.verification_output[-MAX_PREVIOUS_OUTPUT:]
    heading = f"## Attempt {unit.attempt} did not pass ({unit.status})"
    parts = [f"Verification output:\n```\n{output}\n```" if output else ""]
    if unit.summary and not output:
        parts.append(f"It ended: {unit.summary[:MAX_PREVIOUS_SUMMARY]}")
    parts += [_refusals(unit), _changes(unit)]
    detail = "\n".join(part for part in parts if part) or "No output."
    return f"{heading}\n{detail}\nFix what failed; the worktree still holds that attempt's changes."


def _changes(unit: Unit) -> str:
    """The task branch's changes as that attempt left them (its checkpoint), cut."""
    patch = unit.checkpoint_patch
    if not patch.strip():
        return "It changed no file."
    if len(patch) > MAX_PREVIOUS_DIFF:
        patch = patch[:MAX_PREVIOUS_DIFF] + f"\n[… {len(patch) - MAX_PREVIOUS_DIFF} characters cut]"
    return f"Its changes (git diff):\n```diff\n{patch}\n```"


def _refusals(unit: Unit) -> str:
    """The calls the gate denied in that attempt: not to be tried again as they were."""
    denied = [
        event
        for event in TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL).order_by("seq")
        if (event.payload.get("decision") or {}).get("decision") == "deny"
    ][-MAX_REFUSALS:]
    if not denied:
        return ""
    lines = ["Refused by the permission gate (do not try these again as they were):"]
    for event in denied:
        arguments = event.payload.get("arguments")
        shown = arguments if isinstance(arguments, str) else _short_arguments(arguments or {})
        lines.append(f"- {event.name}({shown}) → {str(event.payload.get('output', ''))[:300]}")
    return "\n".join(lines)


def changes_requested_after(unit: Unit) -> TaskTransition | None:
    """The review that sent ``unit``'s work back with changes, if one did. The lifecycle
    has one move from review to todo, and it is a person requesting changes; its
    transition row keeps the reviewer's words (``reason``) for good."""
    return (
        TaskTransition.objects.filter(
            task_id=unit.task_id,
            from_status=TaskStatus.REVIEW,
            to_status=TaskStatus.TODO,
            created_at__gte=unit.started_at,
        )
        .order_by("-created_at", "-pk")
        .first()
    )


def review_briefing(unit: Unit, review: TaskTransition) -> str:
    """Attempt ``unit`` passed verification, but its reviewer asked for changes."""
    reviewer = review.actor_label
    comment = "\n".join(f"> {line}" for line in review.reason.splitlines()) or "> (no comment)"
    # A model's review that sent the work back (``ModelReview.sent_back``), or a person.
    by_model = ModelReview.objects.filter(unit=unit, sent_back=True).exists()
    who = "A model review" if by_model else f"A person{f' ({reviewer})' if reviewer else ''}"
    return (
        f"## Attempt {unit.attempt} passed verification; the reviewer asked for changes\n"
        f"{who} reviewed attempt {unit.attempt}'s changes and sent them back:\n\n"
        f"{comment}\n\n"
        f"{_line_comments(unit)}"
        f"The worktree still holds attempt {unit.attempt}'s changes. Change them as the "
        "reviewer asks, keep every acceptance criterion met, and run the verify commands "
        "again before you finish."
    )


def _line_comments(unit: Unit) -> str:
    """The reviewer's open comments on lines of ``unit``'s diff, each with its line."""
    comments = list(DiffComment.objects.filter(unit=unit, addressed=False))  # open ones
    if not comments:
        return ""
    lines = ["Comments on lines of those changes (address each one):"]
    for c in comments:
        where = f"{c.path}:{c.line}" + (" (a removed line)" if c.side == "old" else "")
        lines.append(f"- {where}: `{c.line_text.strip()}`\n  {c.text}")
    return "\n".join(lines) + "\n\n"


def merge_sent_back_after(unit: Unit) -> MergeRequest | None:
    """The merge queue's entry that sent ``unit``'s approved work back, if one did:
    the task's verify commands (or the project's check) failed on the merged tree."""
    return (
        MergeRequest.objects.filter(
            task_id=unit.task_id, status=MergeStatus.SENT_BACK, created_at__gte=unit.started_at
        )
        .order_by("-pk")
        .first()
    )


def merged_tree_briefing(unit: Unit, entry: MergeRequest) -> str:
    """Attempt ``unit`` passed on its own branch, but not merged with the base branch."""
    output = entry.output[-MAX_PREVIOUS_OUTPUT:] or "No output."
    return (
        f"## Attempt {unit.attempt} passed on its own, but failed merged with "
        f"{entry.base_branch}\n"
        f"Your changes were approved and merged onto the current {entry.base_branch} "
        "(other work landed there meanwhile) in a scratch tree, and the verify commands "
        f"failed on that merged tree:\n```\n{output}\n```\n"
        f"Your worktree now holds that merged tree. Make the changes work together with "
        f"what {entry.base_branch} has now, and run the verify commands again before you "
        "finish."
    )


def recovery_briefing(unit: Unit) -> str:
    """What the crashed unit had done, rebuilt from its recorded trace."""
    events = list(
        TraceEvent.objects.filter(unit=unit, kind=TraceKind.TOOL_CALL).order_by("seq")[
            :MAX_BRIEFING_EVENTS
        ]
    )
    if not events:
        return f"Attempt {unit.attempt} stopped (its worker was lost) before it called any tool."
    lines = [f"Attempt {unit.attempt} stopped because its worker was lost. It had run:"]
    for event in events:
        arguments = event.payload.get("arguments")
        shown = arguments if isinstance(arguments, str) else _short_arguments(arguments or {})
        outcome = str(event.payload.get("output", ""))[:200].replace("\n", " ")
        lines.append(f"- {event.name}({shown}) → {outcome}")
    lines.append("Its changes are still in the worktree. Check them, then continue.")
    return "\n".join(lines)


def _short_arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{key}={str(value)[:80]!r}" for key, value in arguments.items())
