"""The slash-command grammar: one parser for the web command bar, the CLI and headless.

``parse(text)`` returns a typed command or raises ``CommandRejected`` with a one-line
message naming what was wrong and what is accepted. It changes nothing: applying a
command is ``agents_app.services.commands.command_apply``.

``--confirm`` is part of the grammar on every command that can change the permission
profile (/mode, /permission-profile, /trust, /steer): the service refuses a raise to
``unrestricted`` without it, the same way on every surface.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from agents_app.axes import ModelMode, PermissionProfile, RunControl, WorkMode
from agents_app.models import TransitionScope
from sf_core.errors import CommandRejected

MAX_LENGTH = 2000

# /steer names axes the way people say them.
STEER_AXES = {
    "mode": "work_mode",
    "control": "run_control",
    "permission-profile": "permission_profile",
    "model-mode": "model_mode",
}
AXIS_VALUES = {
    "work_mode": WorkMode.values,
    "run_control": RunControl.values,
    "permission_profile": PermissionProfile.values,
    "model_mode": ModelMode.values,
}
QUERIES = ("status", "tasks", "cost", "session-report")
CONFIRM = "--confirm"


class ConfirmationRequired(CommandRejected):
    """A command that needs ``--confirm`` (raising the profile to unrestricted).
    ``confirm_text`` is the same command with it, for a surface to offer."""

    def __init__(self, message: str, *, confirm_text: str) -> None:
        super().__init__(message)
        self.confirm_text = confirm_text


@dataclass(frozen=True)
class SetAxes:
    """Change axes now (or before the next dispatch point if the engine is busy)."""

    changes: dict[str, str]
    resume: bool = False  # an explicit run-control command also lifts a pause
    confirmed: bool = False  # --confirm: needed to raise the profile to unrestricted


@dataclass(frozen=True)
class Steer:
    """A scoped change, applied by the engine when its scope is due."""

    changes: dict[str, str]
    scope: str
    confirmed: bool = False


@dataclass(frozen=True)
class Pause:
    pass


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Next:
    """Run exactly one unit, then pause, whatever the run control (which stays as is)."""


@dataclass(frozen=True)
class Query:
    """A read-only command: /status, /tasks, /cost, /session-report."""

    name: str


@dataclass(frozen=True)
class SkillCommand:
    """/skills lists the skills of the session's project with their status; /skill NAME
    [args] invokes one for the session's next unit (if it is user-invocable)."""

    name: str = ""  # "" lists
    args: str = ""


class DoctorAction(StrEnum):
    INSPECT = "inspect"  # /doctor: the report
    FIX = "fix"  # /doctor fix: the deterministic repairs
    HEAL = "heal"  # /doctor heal: a repair unit, the report as its brief


@dataclass(frozen=True)
class Doctor:
    """/doctor [fix|heal]: SF's health checks (docs/doctor.md)."""

    action: DoctorAction = DoctorAction.INSPECT


Command = SetAxes | Steer | Pause | Stop | Next | Query | SkillCommand | Doctor
Handler = Callable[[str, list[str]], Command]


def parse(text: str) -> Command:
    words = _split(text)
    name, args = words[0][1:], words[1:]
    handler = _HANDLERS.get(name)
    if handler is None:
        if name == "sf":
            raise CommandRejected(
                "/sf is not a command root; use the direct command, e.g. /mode build or /status"
            )
        raise CommandRejected(f"unknown command /{name}; accepted: {_accepted_commands()}")
    return handler(name, args)


def _split(text: str) -> list[str]:
    stripped = text.strip()
    if not stripped:
        raise CommandRejected("empty command; type a command such as /status")
    if len(stripped) > MAX_LENGTH:
        raise CommandRejected(
            f"command too long ({len(stripped)} characters, at most {MAX_LENGTH})"
        )
    if not stripped.startswith("/"):
        raise CommandRejected(f"commands start with /, e.g. /status; got {_quote(stripped)}")
    try:
        words = shlex.split(stripped)
    except ValueError as exc:
        raise CommandRejected(f"cannot read the command: {exc}") from None
    if not words or words[0] == "/":
        raise CommandRejected("missing command name after /; e.g. /status")
    return words


def _mode(name: str, args: list[str]) -> Command:
    positional, options = _options(name, args, valued=("--permission-profile", "--model-mode"))
    work_mode = _one_value(name, positional, "work_mode")
    changes = {"work_mode": work_mode}
    if options.pop("--autonomous", None) is not None:
        changes["run_control"] = RunControl.AUTONOMOUS
    for flag, axis in (
        ("--permission-profile", "permission_profile"),
        ("--model-mode", "model_mode"),
    ):
        if flag in options:
            changes[axis] = _value(f"{name} {flag}", options[flag], axis)
    return SetAxes(changes=changes, resume="run_control" in changes, confirmed=CONFIRM in options)


def _repair(name: str, args: list[str]) -> Command:
    positional, options = _options(name, args, valued=())
    _no_positional(name, positional)
    changes = {"work_mode": str(WorkMode.REPAIR)}
    if options.get("--autonomous") is not None:
        changes["run_control"] = RunControl.AUTONOMOUS
    return SetAxes(changes=changes, resume="run_control" in changes)


def _single_axis(axis: str) -> Handler:
    def handler(name: str, args: list[str]) -> Command:
        positional, options = _options(name, args, valued=())
        value = _one_value(name, positional, axis)
        return SetAxes(
            changes={axis: value}, resume=axis == "run_control", confirmed=CONFIRM in options
        )

    return handler


def _fixed(command: Command) -> Handler:
    def handler(name: str, args: list[str]) -> Command:
        if args:
            raise CommandRejected(f"/{name} takes no arguments; got {_quote(' '.join(args))}")
        return command

    return handler


def _steer(name: str, args: list[str]) -> Command:
    args, options = _options(name, args, valued=())
    if len(args) not in (2, 3):
        raise CommandRejected(
            "usage: /steer mode|permission-profile|model-mode|control VALUE "
            f"[{'|'.join(TransitionScope.values)}] [{CONFIRM}]"
        )
    axis_word, value = args[0], args[1]
    axis = STEER_AXES.get(axis_word)
    if axis is None:
        raise CommandRejected(
            f"/steer cannot change {_quote(axis_word)}; accepted: {', '.join(STEER_AXES)}"
        )
    scope = args[2] if len(args) == 3 else TransitionScope.NOW
    if scope not in TransitionScope.values:
        raise CommandRejected(
            f"unknown scope {_quote(scope)}; accepted: {', '.join(TransitionScope.values)}"
        )
    changes = {axis: _value(f"steer {axis_word}", value, axis)}
    return Steer(changes=changes, scope=str(scope), confirmed=CONFIRM in options)


def _skill(name: str, args: list[str]) -> Command:
    if name == "skills":
        if args:
            raise CommandRejected(f"/skills takes no arguments; got {_quote(' '.join(args))}")
        return SkillCommand()
    if not args:
        raise CommandRejected("usage: /skill NAME [arguments]; /skills lists the skills")
    return SkillCommand(name=args[0], args=shlex.join(args[1:]) if args[1:] else "")


def _doctor(name: str, args: list[str]) -> Command:
    if not args:
        return Doctor()
    accepted = (DoctorAction.FIX, DoctorAction.HEAL)
    if len(args) > 1 or args[0] not in accepted:
        raise CommandRejected(f"/doctor takes nothing, fix or heal; got {_quote(' '.join(args))}")
    return Doctor(action=DoctorAction(args[0]))


def _options(
    name: str, args: list[str], *, valued: tuple[str, ...]
) -> tuple[list[str], dict[str, str]]:
    """Split ``args`` into positionals and ``--flag [value]`` options (also ``--flag=value``)."""
    accepted = _ACCEPTED_FLAGS.get(name, ())
    positional: list[str] = []
    options: dict[str, str] = {}
    queue = list(args)
    while queue:
        word = queue.pop(0)
        if not word.startswith("--"):
            positional.append(word)
            continue
        flag, _, inline = word.partition("=")
        if flag not in accepted:
            allowed = ", ".join(accepted) or "none"
            raise CommandRejected(f"unknown option {flag} for /{name}; accepted: {allowed}")
        if flag in options:
            raise CommandRejected(f"option {flag} given twice")
        if flag in valued:
            if not inline and not queue:
                raise CommandRejected(f"option {flag} needs a value")
            options[flag] = inline or queue.pop(0)
        elif inline:
            raise CommandRejected(f"option {flag} takes no value")
        else:
            options[flag] = ""
    return positional, options


def _one_value(name: str, positional: list[str], axis: str) -> str:
    if len(positional) != 1:
        raise CommandRejected(f"/{name} takes one value: {'|'.join(AXIS_VALUES[axis])}")
    return _value(name, positional[0], axis)


def _value(context: str, value: str, axis: str) -> str:
    if value not in AXIS_VALUES[axis]:
        accepted = ", ".join(AXIS_VALUES[axis])
        raise CommandRejected(f"unknown value {_quote(value)} for /{context}; accepted: {accepted}")
    return value


def _no_positional(name: str, positional: list[str]) -> None:
    if positional:
        raise CommandRejected(f"/{name} takes no value; got {_quote(' '.join(positional))}")


def _quote(text: str) -> str:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return repr(shown)


def _accepted_commands() -> str:
    return ", ".join(f"/{name}" for name in _HANDLERS)


_ACCEPTED_FLAGS: dict[str, tuple[str, ...]] = {
    "mode": ("--autonomous", "--permission-profile", "--model-mode", CONFIRM),
    "repair": ("--autonomous",),
    "permission-profile": (CONFIRM,),
    "trust": (CONFIRM,),
    "steer": (CONFIRM,),
}

_HANDLERS: dict[str, Handler] = {
    "mode": _mode,
    "control": _single_axis("run_control"),
    "autonomous": _fixed(SetAxes(changes={"run_control": "autonomous"}, resume=True)),
    "next": _fixed(Next()),
    "pause": _fixed(Pause()),
    "stop": _fixed(Stop()),
    "permission-profile": _single_axis("permission_profile"),
    "trust": _single_axis("permission_profile"),
    "model-mode": _single_axis("model_mode"),
    "steer": _steer,
    "repair": _repair,
    "doctor": _doctor,
    "skills": _skill,
    "skill": _skill,
    **{query: _fixed(Query(name=query)) for query in QUERIES},
}
