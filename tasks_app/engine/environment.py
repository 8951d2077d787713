"""A worktree's environment (docs/worktree-environment.md): files written from project
secrets, the project's setup command run once per worktree, per-unit resources.

Before a unit's agent starts: the secret files are written (every unit: a rotated
secret is picked up; they are never committed, ``Workspace.private``), the unit's
resources are chosen and stored on the unit, and, unless this worktree's setup has
passed before, the setup command is judged by the permission gate like an agent's
``run_command`` under the session's profile (an ask blocks the task for a person, as
the agent's asks do) and run in the OS sandbox with the project's egress. Its output,
exit code and time are a ``WorktreeSetup`` row, shown on the unit page.
"""

from __future__ import annotations

import os
import socket
import time

import sf_native
from agents_app.gate.redaction import redact_text
from agents_app.gate.session import SessionGate
from agents_app.models import AgentSession
from agents_app.runtime.loop import LoopResult, Outcome
from agents_app.runtime.sandbox import SandboxRefused, policy_for, sandboxed_run
from agents_app.runtime.sandbox_user import sandbox_may_read
from agents_app.runtime.tools import COMMAND_ENV_KEEP, cap
from agents_app.schemas import WorktreeEnv, WorktreeResource
from sf_core.beneath import write_beneath
from sf_core.errors import SfError
from sf_core.secrets import secret_value
from tasks_app.models import SetupStatus, Task, Unit, WorktreeSetup
from tasks_app.workspaces import Workspace

SETUP_OUTPUT_CHARS = 20_000
ENV_NAMES = {WorktreeResource.PORT: "SF_PORT", WorktreeResource.DATABASE: "SF_DATABASE_NAME"}


class SetupFailed(SfError):
    """The worktree's setup was denied, failed or timed out: the unit cannot start."""


def worktree_prepare(
    *, task: Task, unit: Unit, ws: Workspace
) -> tuple[LoopResult | None, dict[str, str]]:
    """Files, resources and setup before the agent starts: (a blocked result when the
    setup waits for a person, the unit's resources as environment variables)."""
    config = task.plan.session.project.parsed_policy.worktree
    resources = unit_resources(task=task, unit=unit, config=config)
    worktree_files(ws, config)
    env = command_env(resources)
    return worktree_setup(task=task, unit=unit, ws=ws, config=config, env=env), resources


def command_env(resources: dict[str, str]) -> dict[str, str]:
    """What a command of this unit sees: the kept variables, and its resources."""
    env = {k: os.environ[k] for k in COMMAND_ENV_KEEP if k in os.environ}
    return env | {"TERM": "dumb", "GIT_TERMINAL_PROMPT": "0"} | resources


def unit_resources(*, task: Task, unit: Unit, config: WorktreeEnv) -> dict[str, str]:
    """Choose the unit's resources (environment variable → value) and store them."""
    chosen: dict[str, str] = {}
    for resource in config.resources:
        if resource == WorktreeResource.PORT:
            chosen[ENV_NAMES[resource]] = str(free_port())
        elif resource == WorktreeResource.DATABASE:
            chosen[ENV_NAMES[resource]] = scratch_database_name(task, unit)
    if chosen or unit.resources:  # nothing to write for a project with no resources
        Unit.objects.filter(pk=unit.pk).update(resources=chosen)
    return chosen


def free_port() -> int:
    """A TCP port free right now (bound to port 0 and released). Another process may
    take it before the unit's command does; a port per unit keeps units apart."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scratch_database_name(task: Task, unit: Unit) -> str:
    """``sf_<project>_<task>_<attempt>``: a name, not a database (see the doc)."""
    return f"sf_{task.plan.session.project_id}_{task.pk}_{unit.attempt}"


def worktree_files(ws: Workspace, config: WorktreeEnv) -> None:
    """Write each secret file into the worktree (mode 0600; and readable by the
    sandbox's host user when SF is root: ``sandbox_may_read``)."""
    for spec in config.files:
        target = (ws.path / spec.path).resolve()
        if not target.is_relative_to(ws.path.resolve()):
            raise SetupFailed(f"worktree file {spec.path} is outside the worktree")
        try:  # no link followed on the way: a sandboxed process may run meanwhile
            data = secret_value(spec.secret).encode("utf-8")
            write_beneath(
                ws.path.resolve(), target, data, 0o600, set_mode=True, opened=sandbox_may_read
            )
        except OSError as exc:
            raise SetupFailed(f"worktree file {spec.path} cannot be written: {exc}") from None


def worktree_setup(
    *, task: Task, unit: Unit, ws: Workspace, config: WorktreeEnv, env: dict[str, str]
) -> LoopResult | None:
    """Run the setup if this worktree needs it. None: ready; a blocked ``LoopResult``:
    the gate asks a person first. A denied or failed setup raises ``SetupFailed``."""
    if not config.setup or (_set_up(task) and _set_up_here(ws)):
        return None
    command = config.setup
    gate = SessionGate(session_id=task.plan.session_id, worktree=ws.path, unit_id=unit.pk)
    arguments = {"command": command}
    hashed = sf_native.canonical_hash(
        {"tool": "run_command", "input": gate.normalize("run_command", arguments)}
    )
    verdict = gate.check("run_command", arguments, hashed)
    if verdict.decision != "allow":
        _record(task, unit, command, SetupStatus.REFUSED, None, verdict.reason, 0.0, verdict)
        if verdict.decision == "ask":
            detail = f"worktree setup: {verdict.reason}"
            return LoopResult(Outcome.BLOCKED, decision_id=verdict.decision_id, detail=detail)
        raise SetupFailed(f"the permission gate denies the worktree setup: {verdict.reason}")
    exit_code, output, seconds = _run(task, ws, command, env, config.setup_timeout_s)
    status = SetupStatus.PASSED if exit_code == 0 else SetupStatus.FAILED
    _record(task, unit, command, status, exit_code, output, seconds, verdict)
    if status == SetupStatus.PASSED and ws.remote:
        _mark_set_up_here(ws, unit)
    if status != SetupStatus.PASSED:
        shown = "timed out" if exit_code is None else f"exit {exit_code}"
        raise SetupFailed(f"the worktree setup failed ({shown}); its output is on the unit page")
    return None


# Record mode (engine.record): a unit on another host, or after the record moved past
# this host's tree, works in a worktree made afresh, which the setup has not seen. This
# file, in the worktree's admin directory (gone with the worktree, never committed),
# says the setup ran in this very tree.
SET_UP_HERE = "sf-set-up"


def _mark_set_up_here(ws: Workspace, unit: Unit) -> None:
    """Write the mark as a new file, never through what is already there: the setup
    just ran in the sandbox with the admin directory writable, and a link it left at
    this name had SF write, as root, wherever it pointed (any host file, truncated).
    An entry there already (a mark, or a planted one) is left to ``planted_links``,
    which refuses the worktree before SF's git touches it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(ws.tree.git_dir / SET_UP_HERE, flags, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"{unit.pk}\n")


def _set_up_here(ws: Workspace) -> bool:
    return not ws.remote or (ws.tree.git_dir / SET_UP_HERE).is_file()


def _set_up(task: Task) -> bool:
    return WorktreeSetup.objects.filter(
        task=task, branch_attempt=task.branch_attempt, status=SetupStatus.PASSED
    ).exists()


def _run(
    task: Task, ws: Workspace, command: str, env: dict[str, str], timeout: int
) -> tuple[int | None, str, float]:
    session = AgentSession.objects.select_related("project").get(pk=task.plan.session_id)
    parsed = session.project.parsed_policy
    policy = policy_for(session.permission_profile, parsed.egress, parsed.sandbox)
    started = time.monotonic()
    try:
        done = sandboxed_run(command, worktree=ws.path, policy=policy, env=env, timeout=timeout)
    except SandboxRefused as exc:
        return None, str(exc), 0.0
    output = done.output if done.exit_code is not None else f"timed out after {timeout} s\n"
    return done.exit_code, output, time.monotonic() - started


def _record(
    task: Task,
    unit: Unit,
    command: str,
    status: str,
    exit_code: int | None,
    output: str,
    seconds: float,
    verdict: object,
) -> None:
    WorktreeSetup.objects.create(
        task=task,
        branch_attempt=task.branch_attempt,
        unit=unit,
        command=redact_text(command),
        status=status,
        exit_code=exit_code,
        output=redact_text(cap(output, SETUP_OUTPUT_CHARS)),
        seconds=seconds,
        decision_id=getattr(verdict, "decision_id", None),
    )


def setup_rows_of(unit: Unit) -> list[WorktreeSetup]:
    """The setup runs of ``unit``'s worktree up to it (the page shows them)."""
    return list(
        WorktreeSetup.objects.filter(
            task_id=unit.task_id, unit__attempt__lte=unit.attempt
        ).select_related("unit")
    )
