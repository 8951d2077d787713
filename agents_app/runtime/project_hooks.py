"""Running the project's hooks (``agents_app.hook_schemas``, docs/hooks.md) in a unit.

A hook runs like an agent's ``run_command``: its command is judged by the permission
gate under the session's axes as they are now (the decision stored as a
``RiskDecision``), and only an ``allow`` runs, in the OS sandbox, in the unit's
worktree, with the unit's resources and what triggered it in ``SF_HOOK_*`` variables.
A command the gate denies or would ask a person about does not run: nobody is there to
be asked in the middle of a tool call, and the policy's allow rules are the place to let
it run.

What a run does, in the order the policy declares the hooks of a trigger:

- ``block`` and exit code 2: blocks (pre_tool: the call does not run; unit_stop: the
  finish is refused; pre_verify: the verification fails), its output the reason the
  model sees. The hooks after it at that trigger do not run.
- exit code 0: a ``note`` hook's output (if any) goes to the model at its next step.
- any other end (another exit code, 2 without ``block``, a timeout, refused by the gate
  or the sandbox): never blocks; unless its output is ``none`` the model gets a note
  saying the hook failed and why.
- a hook that ran ``max_runs`` times in the unit is skipped from then on (traced once).

Every run is a ``hook`` trace event (redacted like every payload), shown on the unit
page. A failure of a hook never fails the unit.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from django.utils import timezone

from agents_app.gate.judged import command_judged, refusal
from agents_app.gate.redaction import redact_text
from agents_app.hook_schemas import Hook, HookOutput, HookTrigger
from agents_app.models import AgentSession, TraceKind
from agents_app.runtime.replay import Replay, ReplayMiss
from agents_app.runtime.sandbox import SandboxRefused, sandboxed_run
from agents_app.runtime.tools import COMMAND_ENV_KEEP, ToolContext, cap
from agents_app.runtime.trace import TraceRecorder

BLOCK_EXIT = 2  # the exit code that blocks (Claude Code's hooks use the same)
MAX_OUTPUT = 4000  # characters of a hook's output kept: the reason, the note, the trace
MAX_VARIABLE = 32 * 1024  # characters of one SF_HOOK_* variable
# How the answer to a call a hook blocked, and to a finish one refused, begin.
BLOCKED = "not run: the project's hook "
REFUSED = "not finished: the project's hook "


@dataclass(frozen=True)
class HookEvent:
    """What triggered a round of hooks."""

    trigger: HookTrigger
    tool: str = ""
    arguments: dict[str, Any] | None = None  # the call's input, normalized and redacted
    output: str = ""  # post_tool: what the tool answered
    summary: str = ""  # unit_stop: the agent's summary

    def variables(self, hook: Hook) -> dict[str, str]:
        found = {"SF_HOOK_NAME": hook.name, "SF_HOOK_TRIGGER": str(self.trigger)}
        if self.tool:
            found["SF_HOOK_TOOL"] = self.tool
        if self.arguments is not None:
            found["SF_HOOK_INPUT"] = json.dumps(self.arguments, ensure_ascii=False)
            for key in ("path", "command"):
                if isinstance(self.arguments.get(key), str):
                    found[f"SF_HOOK_{key.upper()}"] = self.arguments[key]
        if self.trigger == HookTrigger.POST_TOOL:
            found["SF_HOOK_OUTPUT"] = redact_text(self.output)
        if self.summary:
            found["SF_HOOK_SUMMARY"] = redact_text(self.summary)
        return {key: value.replace("\x00", "")[:MAX_VARIABLE] for key, value in found.items()}


@dataclass(frozen=True)
class HookRun:
    """One run of a hook: how it ended and what that does."""

    hook: Hook
    exit_code: int | None  # None: it timed out, or did not run
    output: str  # redacted, capped
    seconds: float = 0.0
    refused: str = ""  # why it did not run (the gate, the sandbox)

    @property
    def blocks(self) -> bool:
        return (
            not self.refused
            and self.hook.output == HookOutput.BLOCK
            and self.exit_code == BLOCK_EXIT
        )

    @property
    def failed(self) -> str:
        """How it failed, in words ('' when it ran to exit code 0 or blocked)."""
        if self.refused:
            return f"did not run: {self.refused}"
        if self.exit_code is None:
            return f"timed out after {self.hook.timeout_s} s"
        if self.exit_code != 0 and not self.blocks:
            return f"failed with exit code {self.exit_code}"
        return ""

    @property
    def effect(self) -> str:
        """blocked, noted, failed (and noted unless ``none``), or ran."""
        if self.blocks:
            return "blocked"
        if self.failed:
            return "failed"
        if self.hook.output == HookOutput.NOTE and self.output:
            return "noted"
        return "ran"

    def note(self) -> str:
        """What the model is told at its next step ('' for nothing)."""
        if self.hook.output == HookOutput.NONE or self.effect in ("blocked", "ran"):
            return ""
        if self.failed:
            said = f"; its output:\n{self.output}" if self.output else ""
            return f"The project's hook {self.hook.name} {self.failed}{said}"
        return f"The project's hook {self.hook.name} says:\n{self.output}"

    def reason(self) -> str:
        return self.output or "(the hook gave no reason)"


def hook_matches(hook: Hook, event: HookEvent) -> bool:
    """Whether ``hook`` runs for ``event``: its trigger, then its tool matchers."""
    if hook.trigger != event.trigger:
        return False
    if hook.match_tools and not any(fnmatchcase(event.tool, p) for p in hook.match_tools):
        return False
    if hook.match_command is not None:
        command = (event.arguments or {}).get("command")
        if event.tool != "run_command" or not isinstance(command, str):
            return False
        return re.search(hook.match_command, command) is not None
    return True


@dataclass
class ProjectHooks:
    """The hooks of one unit: matched, capped, judged, run, traced. Without hooks (the
    default) every method returns at once."""

    hooks: Sequence[Hook] = ()
    session_id: int | None = None
    unit_id: int | None = None
    recorder: TraceRecorder | None = None
    runs: Counter[str] = field(default_factory=Counter)  # by hook name, in this unit
    capped: set[str] = field(default_factory=set)  # hooks skipped at their max_runs
    pending: list[str] = field(default_factory=list)
    # Replaying: a hook blocks a call (or a finish) where the recording's did, and only
    # there; anything else is a ``ReplayMiss`` (the recorded answers assume it).
    replay: Replay | None = None

    @classmethod
    def of_session(
        cls,
        session: AgentSession,
        unit_id: int,
        recorder: TraceRecorder,
        replay: Replay | None = None,
    ) -> ProjectHooks:
        hooks = session.project.parsed_policy.hooks
        return cls(
            hooks=hooks, session_id=session.pk, unit_id=unit_id, recorder=recorder, replay=replay
        )

    def start(self, context: ToolContext) -> None:
        """A unit's agent session starts: its notes go into the first step."""
        self.fire(context, HookEvent(HookTrigger.SESSION_START))

    def before(self, context: ToolContext, tool: str, arguments: dict[str, Any]) -> str:
        """The answer to a call a pre_tool hook blocked ('' to run it)."""
        blocked = self.fire(context, HookEvent(HookTrigger.PRE_TOOL, tool, arguments))
        answer = ""
        if blocked is not None:
            answer = f"{BLOCKED}{blocked.hook.name} blocked it: {blocked.reason()}"
        self._as_recorded(answer, BLOCKED, f"the call of {tool}")
        return answer

    def after(
        self, context: ToolContext, tool: str, arguments: dict[str, Any], output: str
    ) -> None:
        self.fire(context, HookEvent(HookTrigger.POST_TOOL, tool, arguments, output))

    def stop(self, context: ToolContext, summary: str) -> str:
        """The answer to a finish a unit_stop hook refused ('' to finish)."""
        blocked = self.fire(context, HookEvent(HookTrigger.UNIT_STOP, summary=summary))
        answer = ""
        if blocked is not None:
            answer = (
                f"{REFUSED}{blocked.hook.name} says the work is not done: "
                f"{blocked.reason()}\nGo on with the task, then call finish again."
            )
        self._as_recorded(answer, REFUSED, "the finish")
        return answer

    def _as_recorded(self, answer: str, blocked: str, what: str) -> None:
        """Replaying, the hooks block where the recording's did, and only there."""
        recorded = self.replay.last_output() if self.replay is not None else None
        if recorded is None or recorded.startswith(blocked) == bool(answer):
            return
        if answer:
            raise ReplayMiss(f"a hook blocked {what}, which ran when recorded: {answer}")
        raise ReplayMiss(f"no hook blocked {what} now; when recorded: {recorded[:300]}")

    def notes(self) -> list[str]:
        """The hooks' notes for the model's next step (each given once)."""
        notes, self.pending = self.pending, []
        return notes

    def fire(self, context: ToolContext, event: HookEvent) -> HookRun | None:
        """Run the hooks ``event`` triggers, in order; the run that blocked, if one did
        (the later hooks then do not run). Notes wait in ``pending``."""
        for hook in self.hooks:
            if not hook_matches(hook, event) or self._capped(hook, event):
                continue
            self.runs[hook.name] += 1
            started = timezone.now()
            run = self._run(hook, context, event)
            self._trace(run, event, started)
            if run.blocks:
                return run
            if run.note():
                self.pending.append(run.note())
        return None

    def _capped(self, hook: Hook, event: HookEvent) -> bool:
        """Ran ``max_runs`` times in this unit: skipped, and traced the first time."""
        if self.runs[hook.name] < hook.max_runs:
            return False
        if hook.name not in self.capped:
            self.capped.add(hook.name)
            skipped = HookRun(hook, None, "", refused=f"ran {hook.max_runs} times (max_runs)")
            self._trace(skipped, event, timezone.now(), effect="capped")
        return True

    def _run(self, hook: Hook, context: ToolContext, event: HookEvent) -> HookRun:
        refused = self._judged(hook, context.worktree)
        if refused:
            return HookRun(hook, None, "", refused=refused)
        env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ}
        env |= {"TERM": "dumb", "GIT_TERMINAL_PROMPT": "0"} | context.env
        env |= event.variables(hook)
        started = time.monotonic()
        try:
            done = sandboxed_run(
                hook.command,
                worktree=context.worktree,
                policy=context.sandbox(),
                env=env,
                timeout=hook.timeout_s,
            )
        except (SandboxRefused, OSError) as exc:  # a hook's failure never ends the unit
            return HookRun(hook, None, "", refused=str(exc))
        output = redact_text(cap(done.output.strip(), MAX_OUTPUT))
        return HookRun(hook, done.exit_code, output, time.monotonic() - started)

    def _judged(self, hook: Hook, worktree: Path) -> str:
        """The gate's refusal of the hook's command ('' when it allows it), stored."""
        if self.session_id is None:
            return "no session to judge it in"
        return hook_judged(
            hook, session_id=self.session_id, unit_id=self.unit_id, worktree=worktree
        )

    def _trace(self, run: HookRun, event: HookEvent, started: Any, effect: str = "") -> None:
        if self.recorder is None:
            return
        payload: dict[str, Any] = {
            "trigger": str(event.trigger),
            "command": run.hook.command,
            "output_mode": str(run.hook.output),
            "effect": effect or run.effect,
            "exit_code": run.exit_code,
            "seconds": round(run.seconds, 3),
            "output": run.output,
            "run": self.runs[run.hook.name],
            "max_runs": run.hook.max_runs,
        }
        if event.tool:
            payload["tool"] = event.tool
        if run.refused or run.failed:
            payload["problem"] = run.refused or run.failed
        name = run.hook.name
        self.recorder.record(TraceKind.HOOK, name=name, payload=payload, started_at=started)


def hook_judged(hook: Hook, *, session_id: int, unit_id: int | None, worktree: Path) -> str:
    """The permission gate's decision on ``hook``'s command as an agent's run_command,
    stored as a ``RiskDecision``; '' when it allows it, else the refusal in words."""
    session = AgentSession.objects.select_related("project").get(pk=session_id)
    verdict = command_judged(
        session, hook.command, worktree=worktree, unit_id=unit_id, why=f"hook {hook.name}"
    )
    return refusal(verdict)
