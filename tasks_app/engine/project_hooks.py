"""The project's hooks in a unit (docs/hooks.md): wired into its agent loop, and run
before its verify commands.

The runtime runs them (``agents_app.runtime.project_hooks``); the engine says where:
the loop's ``triggers`` (session_start, pre_tool, post_tool, unit_stop) and, after the
agent finished, the pre_verify hooks. A pre_verify hook that blocks fails the
verification with its reason (the verify commands do not run): the next attempt's
brief quotes it like any verification output. Their notes and failures go into the
verification's report for the same reason: after the agent finished, there is no next
step of this unit to give them to.
"""

from __future__ import annotations

from agents_app.hook_schemas import HookTrigger
from agents_app.models import AgentSession
from agents_app.runtime.loop import AgentLoop
from agents_app.runtime.project_hooks import HookEvent, ProjectHooks
from agents_app.runtime.sandbox import policy_for
from agents_app.runtime.tools import ToolContext
from agents_app.runtime.trace import TraceRecorder
from tasks_app.engine.hooks import EngineHooks
from tasks_app.engine.verification import CommandResult, Verification
from tasks_app.models import Task, Unit
from tasks_app.workspaces import Workspace


def unit_loop_started(
    loop: AgentLoop, hooks: EngineHooks, session: AgentSession, unit: Unit, recorder: TraceRecorder
) -> None:
    """From here on people's follow-ups reach the model before each step (the engine's
    hooks), and the project's hooks run at their triggers (the loop's ``triggers``)."""
    hooks.unit_id, hooks.recorder = unit.pk, recorder
    loop.triggers = ProjectHooks.of_session(session, unit.pk, recorder, loop.replay)


def unit_pre_verify(*, task: Task, unit: Unit, ws: Workspace) -> tuple[Verification | None, str]:
    """Run the pre_verify hooks: a failed verification when one blocks (else None), and
    the notes they left for the report ('' when none)."""
    session = AgentSession.objects.select_related("project").get(pk=task.plan.session_id)
    policy = session.project.parsed_policy
    if not any(hook.trigger == HookTrigger.PRE_VERIFY for hook in policy.hooks):
        return None, ""
    recorder = TraceRecorder(session=session, unit_id=unit.pk)
    runner = ProjectHooks.of_session(session, unit.pk, recorder)
    sandbox = policy_for(session.permission_profile, policy.egress, policy.sandbox)
    resources = Unit.objects.values_list("resources", flat=True).get(pk=unit.pk) or {}
    context = ToolContext(worktree=ws.path, sandbox=lambda: sandbox, env=dict(resources))
    blocked = runner.fire(context, HookEvent(HookTrigger.PRE_VERIFY))
    notes = "".join(f"{note}\n\n" for note in runner.notes())
    if blocked is None:
        return None, notes
    result = CommandResult(
        f"(hook {blocked.hook.name}) {blocked.hook.command}",
        blocked.exit_code,
        f"the project's hook {blocked.hook.name} blocked the verification: {blocked.reason()}",
        blocked.seconds,
    )
    return Verification([result]), notes
