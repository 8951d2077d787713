"""Line comments on a unit's diff (``DiffComment``): a reviewer writes them, "Request
changes" carries the open ones into the next unit's brief (``engine.prompts``), the
next unit's checkpoint records whether it changed each commented line, and a person
may mark a comment addressed."""

from __future__ import annotations

import re

from django.utils import timezone

from sf_core.actors import Actor
from sf_core.errors import NotAllowed
from sf_core.git import git
from tasks_app.diffs import diff_files
from tasks_app.models import DiffComment, DiffSide, Unit
from tasks_app.workspaces import Workspace

MAX_COMMENT_CHARS = 4000
HUNK_RANGES = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def diff_line_text(unit: Unit, *, path: str, line: int, side: str) -> str | None:
    """The text of line ``line`` (numbered on ``side``) of ``path`` in ``unit``'s diff,
    or None when the diff does not show that line."""
    for file in diff_files(unit.checkpoint_patch):
        if file.path != path:
            continue
        for shown in file.lines:
            number = shown.new_no if side == DiffSide.NEW else shown.old_no
            if number == line and shown.kind in ("add", "del", "ctx"):
                return _plain(shown.html)
    return None


def _plain(html: str) -> str:
    text = re.sub(r"<[^>]+>", "", html)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#x27;", "'")):
        text = text.replace(entity, char)
    return text.replace("&amp;", "&")


def diff_comment_create(
    *, unit: Unit, path: str, line: int, side: str, text: str, actor: Actor
) -> DiffComment:
    """A reviewer's comment on a line the unit's diff shows (access is the caller's)."""
    text = text.strip()
    if not text:
        raise NotAllowed("write the comment first")
    if side not in DiffSide.values:
        raise NotAllowed(f"side must be one of {', '.join(DiffSide.values)}")
    line_text = diff_line_text(unit, path=path, line=line, side=side)
    if line_text is None:
        raise NotAllowed(f"the diff of this unit has no line {path}:{line}")
    return DiffComment.objects.create(
        unit=unit,
        path=path,
        line=line,
        side=side,
        line_text=line_text,
        text=text[:MAX_COMMENT_CHARS],
        author=actor.user,
        author_label=str(actor),
    )


def diff_comment_address(*, comment: DiffComment, actor: Actor) -> DiffComment:
    """A person says the comment has been dealt with."""
    comment.addressed = True
    comment.addressed_by = str(actor)
    comment.addressed_at = timezone.now()
    comment.save(update_fields=["addressed", "addressed_by", "addressed_at"])
    return comment


def open_comments(unit: Unit) -> list[DiffComment]:
    """The comments on ``unit``'s diff nobody has marked addressed."""
    return list(DiffComment.objects.filter(unit=unit, addressed=False))


def previous_unit(unit: Unit) -> Unit | None:
    return Unit.objects.filter(task_id=unit.task_id, attempt=unit.attempt - 1).first()


def carried_comments(previous: Unit | None) -> list[DiffComment]:
    """The comments on ``previous``, the attempt before a unit (``previous_unit``): what
    its reviewer sent back. The caller has it (the unit page reads every attempt)."""
    return list(DiffComment.objects.filter(unit=previous)) if previous else []


def diff_comments_check(unit: Unit, ws: Workspace) -> None:
    """After ``unit``'s checkpoint: did it change the lines commented on the attempt
    before it? Decided on the commits (the previous unit's and this one's), stored on
    each comment; a changed line counts as addressed by this unit."""
    previous = previous_unit(unit)
    if previous is None or not previous.checkpoint_commit:
        return
    pending = DiffComment.objects.filter(unit=previous, line_changed__isnull=True)
    if not pending.exists():
        return
    current = Unit.objects.values_list("checkpoint_commit", flat=True).get(pk=unit.pk)
    for comment in pending:
        if comment.side != DiffSide.NEW:
            continue  # a removed line has no place in the new file to compare
        changed = bool(current) and _line_touched(
            ws, previous.checkpoint_commit, current, comment.path, comment.line
        )
        DiffComment.objects.filter(pk=comment.pk).update(line_changed=changed)
        if changed and not comment.addressed:
            DiffComment.objects.filter(pk=comment.pk).update(
                addressed=True, addressed_by=f"attempt {unit.attempt}", addressed_at=timezone.now()
            )


def _line_touched(ws: Workspace, before: str, after: str, path: str, line: int) -> bool:
    """Does ``git diff -U0 before after -- path`` change, remove or insert next to
    line ``line`` of the file as it was at ``before``?"""
    diff = git("diff", "-U0", before, after, "--", path, cwd=ws.repo, check=False)
    for header in diff.splitlines():
        match = HUNK_RANGES.match(header)
        if not match:
            continue
        start, count = int(match.group(1)), int(match.group(2) or "1")
        if count == 0 and start in (line - 1, line):  # inserted right before or after
            return True
        if count and start <= line < start + count:
            return True
    return False
