"""``manage.py sf headless [autonomous|next|query]``: SF for CI and scripts.

Every input is checked before anything is written (exit 2 with a one-line message).
stdout carries only the result: one JSON object (``json``), one JSON event per line
(``stream-json``) or a short summary (``text``); progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

import yaml
from django.utils import timezone

from agents_app.axes import ModelMode, PermissionProfile
from agents_app.models import AgentSession
from agents_app.runtime.replay import Replay
from sf_core.cli import Subcommand, Writer, acting_actor, add_acting_user
from sf_core.errors import SfError
from sf_core.git import git
from tasks_app.features.headless.access import headless_authorize
from tasks_app.features.headless.answers import answers_load
from tasks_app.features.headless.events import ExitCode, ResultEvent, event_schema
from tasks_app.features.headless.options import HeadlessOptions, model_check, replay_check
from tasks_app.features.headless.query import session_snapshot
from tasks_app.features.headless.runner import HeadlessRun
from tasks_app.features.headless.supervisor import CRASHED, RESUME, is_child, supervise
from tasks_app.models import PlanSource
from tasks_app.plan_files import plan_file_read
from tasks_app.schemas import plan_spec_parse

FORMATS = ("text", "json", "stream-json")
MAX_MODEL_NAME = 200  # Unit.model and Worker.current_model keep 200 characters
logger = logging.getLogger("sf.headless")


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    # float() takes inf, nan and 1e309 (inf): a deadline that never comes, or never
    # compares (nan >= x is always false), so the run would silently have none.
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds, got {text!r}")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def model_name(text: str) -> str:
    """A litellm model name: one line of text, at most what a unit row keeps."""
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError(
            "must not be empty: give a litellm model name, e.g. openai/gpt-4o-mini"
        )
    if not name.isprintable():
        raise argparse.ArgumentTypeError(f"must be one line of printable text, got {text!r}")
    if len(name) > MAX_MODEL_NAME:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_MODEL_NAME} characters, got {len(name)}"
        )
    return name


def count(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


class Output:
    """Where events and the result go, by output format."""

    def __init__(self, fmt: str, stdout: Writer, stderr: Writer) -> None:
        self.fmt = fmt
        self.stdout = stdout
        self.stderr = stderr
        self.title = ""
        self.tty = bool(getattr(stderr, "isatty", lambda: False)())

    def emit(self, event: Any) -> None:
        if self.fmt == "stream-json":
            self._line(event.model_dump_json())
        if event.type != "result":
            self.progress(describe(event))

    def result(self, result: ResultEvent) -> None:
        if self.fmt == "text":
            self._line(f"{result.status}: {result.reason}")
            for task in result.tasks:
                self._line(f"  {task.key:<24} {task.status:<12} {task.reason}")
            for item in result.waiting_for:
                self._line(f"  waiting for: {item}")
            if result.resume:
                self._line(f"  resume: {result.resume}")
        else:
            self._line(result.model_dump_json())

    def progress(self, text: str) -> None:
        if text:
            self.stderr.write(f"[sf] {text}\n")
            flush = getattr(self.stderr, "flush", None)
            if flush:
                flush()

    def set_title(self, title: str) -> None:
        """Text mode on a terminal: the window title follows the mode badge."""
        if self.fmt == "text" and self.tty and title != self.title:
            self.title = title
            self.stderr.write(f"\x1b]0;{title}\x07")

    def _line(self, text: str) -> None:
        self.stdout.write(text + "\n")
        flush = getattr(self.stdout, "flush", None)
        if flush:
            flush()


def describe(event: Any) -> str:
    """One line of progress for people."""
    kind = event.type
    if kind == "session":
        verb = "resuming" if event.resumed else "started"
        return f"{verb} session {event.session} on {event.repo_path}: {event.badge}"
    if kind == "transition":
        paused = " (paused)" if event.paused else ""
        axes = event.to_axes
        return (
            f"mode {axes.work_mode} | {axes.run_control} | {axes.permission_profile} | "
            f"{axes.model_mode}{paused}: {event.reason}"
        )
    if kind == "plan":
        return f"plan {event.id} {event.status}: {event.summary} ({event.tasks} tasks)"
    if kind == "task":
        return f"task {event.task}: {event.from_status} -> {event.to_status} ({event.reason})"
    if kind == "unit":
        detail = f": {event.summary}" if event.summary else ""
        return f"unit {event.attempt} of {event.task} {event.status}{detail}"
    if kind == "tool_call":
        return f"  {event.tool}{'' if event.ok else ' (error)'}"
    if kind == "decision":
        return f"gate {event.decision} {event.tool}: {event.reason} [{event.review_status}]"
    if kind == "heartbeat":
        counts = ", ".join(f"{n} {s}" for s, n in event.tasks.items())
        return f"heartbeat {event.elapsed_s:.0f} s: {event.activity}; {counts}"
    if kind == "restart":
        return ""  # the supervisor says it itself
    return ""


class HeadlessCommand(Subcommand):
    name = "headless"
    help = "Run SF without a person (CI): plan, build, verify, merge; exits 0/1/2/10/11/12."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "mode",
            nargs="?",
            default="autonomous",
            choices=("autonomous", "next", "query"),
            help="autonomous (default): to the end; next: one unit; query: a JSON snapshot",
        )
        parser.add_argument("--project", help="path of the project's git repository")
        parser.add_argument("--session", type=count(1), help="resume this session")
        parser.add_argument("--intent", default="", help="what you want, to plan from")
        parser.add_argument("--plan-file", help="a plan file (YAML, JSON or Markdown)")
        parser.add_argument(
            "--autonomous",
            action="store_true",
            help="accept the plan and build (without it headless stops at plan acceptance)",
        )
        parser.add_argument(
            "--permission-profile",
            choices=PermissionProfile.values,
            help="the session's profile (a new session without it: restricted, read-only)",
        )
        parser.add_argument("--model-mode", choices=ModelMode.values)
        parser.add_argument("--model", type=model_name, help="a litellm model name for every call")
        parser.add_argument(
            "--output-format", choices=FORMATS, help="text (default; json for query) or stream-json"
        )
        parser.add_argument("--timeout", type=positive_float, help="seconds before giving up")
        parser.add_argument(
            "--max-restarts", type=count(0), default=0, help="restart after a crash N times"
        )
        parser.add_argument("--max-autonomous-continues", type=count(1))
        parser.add_argument("--replay", help="answer every model call from this trace")
        parser.add_argument("--answers", help="answers to ask_user and approvals (YAML/JSON)")
        parser.add_argument(
            "--via-workers", action="store_true", help="run units on the Celery workers"
        )
        parser.add_argument(
            "--event-schema", action="store_true", help="print the events' JSON Schema and exit"
        )
        add_acting_user(parser)

    def run(self, options: dict[str, Any]) -> int:
        if options["event_schema"]:
            self.out(json.dumps(event_schema(), indent=2, sort_keys=True))
            return int(ExitCode.SUCCESS)
        if options["output_format"] is None:
            options["output_format"] = "json" if options["mode"] == "query" else "text"
        output = Output(options["output_format"], self._result_stream(options), self.stderr)
        try:
            if options["mode"] == "query":
                return self._query(options, output)
            inputs = headless_options(options)
        except SfError as exc:
            return self._usage(output, str(exc))
        if options["max_restarts"] and not is_child():
            fileno = getattr(output.stdout, "fileno", None)
            return supervise(
                max_restarts=options["max_restarts"],
                emit=output.emit,
                finish=output.result,
                progress=output.progress,
                stdout=output.stdout if fileno else None,
            )
        return self._run(inputs, output)

    def _run(self, inputs: HeadlessOptions, output: Output) -> int:
        def emit(event: Any) -> None:
            output.emit(event)
            if event.type in ("session", "transition") and run.session is not None:
                output.set_title(run.badge_text())

        run = HeadlessRun(inputs, emit=emit, progress=output.progress)
        run.install_signal_handlers()
        try:
            return self._executed(run, output)
        finally:
            run.release()

    def _executed(self, run: HeadlessRun, output: Output) -> int:
        try:
            result = run.execute()
        except SfError as exc:
            result = ResultEvent(
                at=timezone.now(),
                ok=False,
                exit_code=int(ExitCode.ERROR),
                status="error",
                reason=str(exc),
                session=run.session.pk if run.session else None,
            )
        except Exception:
            if is_child():  # the supervisor restarts us
                logger.exception("headless crashed")
                return CRASHED
            raise
        if is_child() and (run.crash is not None or result.exit_code == ExitCode.RELOAD):
            output.progress(result.reason)
            return CRASHED if run.crash is not None else int(ExitCode.RELOAD)
        output.result(result)
        return result.exit_code

    def _query(self, options: dict[str, Any], output: Output) -> int:
        extra = [
            flag
            for flag in ("intent", "plan_file", "replay", "answers", "model", "timeout")
            if options[flag]
        ]
        if extra:
            flag = extra[0].replace("_", "-")
            raise SfError(f"query only reads: it takes --session or --project, not --{flag}")
        snapshot = session_snapshot(
            session_id=options["session"],
            project=options["project"],
            user=acting_actor(options).user,
        )
        if options["output_format"] == "text":
            output._line(snapshot.pop("summary"))
            for task in snapshot["tasks"]:
                output._line(f"  {task['key']:<24} {task['status']:<12} {task['reason']}")
        else:
            snapshot.pop("summary")
            output._line(json.dumps(snapshot, sort_keys=True, default=str))
        return int(ExitCode.SUCCESS)

    def _usage(self, output: Output, message: str) -> int:
        line = message.replace("\n", " ")
        self.err(f"error: {line}")
        if output.fmt != "text":
            output.result(
                ResultEvent(
                    at=timezone.now(),
                    ok=False,
                    exit_code=int(ExitCode.USAGE),
                    status="usage",
                    reason=line,
                )
            )
        return int(ExitCode.USAGE)

    def _result_stream(self, options: dict[str, Any]) -> Writer:
        """Only results on stdout: anything else that writes to file descriptor 1 (a
        library's notice, a verify command's output) goes to stderr instead."""
        if options["mode"] == "query" or options["event_schema"]:
            return self.stdout
        try:
            descriptor = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            return self.stdout  # not a real file (tests capture it)
        if descriptor != 1:
            return self.stdout
        sys.stdout.flush()
        results = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
        os.dup2(2, 1)
        return results


def headless_options(options: dict[str, Any]) -> HeadlessOptions:
    """Check every input and read the files; raises SfError naming the first problem."""
    session_id = options["session"] or _resumed_session()
    intent = options["intent"].strip()
    _check_combinations(options, intent)
    project = Path(options["project"]) if options["project"] else None
    if session_id is None:
        if project is None:
            raise SfError("give --project PATH for a new run, or --session ID to resume one")
        if not (intent or options["plan_file"] or options["replay"]):
            raise SfError("nothing to run: give --intent TEXT, --plan-file PATH or --replay TRACE")
    else:
        _session_exists(session_id)
    if project is not None:
        _check_repository(project)
    replay_path = options["replay"]
    replay = replay_check(Path(replay_path)) if replay_path else None
    inputs = HeadlessOptions(
        mode=options["mode"],
        project=project,
        session_id=session_id,
        intent=intent,
        plan=_plan(options["plan_file"], replay, replay_path),
        plan_source=PlanSource.FILE,
        autonomous=options["autonomous"],
        permission_profile=options["permission_profile"],
        model_mode=options["model_mode"],
        model=options["model"],
        timeout=options["timeout"],
        max_autonomous_continues=options["max_autonomous_continues"],
        replay_path=Path(replay_path) if replay_path else None,
        replay=replay,
        answers=answers_load(options["answers"]) if options["answers"] else None,
        via_workers=options["via_workers"],
        user=acting_actor(options).user,
    )
    if inputs.user is not None:
        headless_authorize(inputs, inputs.user)
    model_check(inputs)
    return inputs


def _check_combinations(options: dict[str, Any], intent: str) -> None:
    plan_file, replay_path = options["plan_file"], options["replay"]
    if options["intent"] and not intent:
        raise SfError("--intent is empty: say what you want, e.g. --intent 'add a --verbose flag'")
    if intent and plan_file:
        raise SfError("give --intent or --plan-file, not both")
    if replay_path and intent:
        raise SfError("--replay takes its plan from the trace (or --plan-file), not --intent")
    if replay_path and options["model"]:
        raise SfError("--replay answers from the trace: it takes no --model")
    if options["mode"] == "next" and options["via_workers"]:
        raise SfError("next runs exactly one unit in this process: drop --via-workers")


def _plan(plan_file: str | None, replay: Replay | None, replay_path: str | None) -> Any:
    """The plan from --plan-file, else the one the replayed trace carries (or None)."""
    if plan_file:
        try:
            return plan_file_read(plan_file)
        except SfError as exc:
            raise SfError(f"--plan-file {plan_file}: {exc}") from None
    if replay is not None:
        return _trace_plan(replay, str(replay_path))
    return None


def _resumed_session() -> int | None:
    """A supervised child restarted after a crash resumes its session."""
    value = os.environ.get(RESUME, "") if is_child() else ""
    return int(value) if value.isdigit() else None


def _session_exists(session_id: int) -> None:
    if not AgentSession.objects.filter(pk=session_id).exists():
        raise SfError(f"--session {session_id}: no such session")


def _check_repository(path: Path) -> None:
    if not path.is_dir():
        raise SfError(f"--project {path}: no such directory")
    if git("rev-parse", "--is-inside-work-tree", cwd=path, check=False) != "true":
        raise SfError(f"--project {path}: not a git repository (git init it first)")


def _trace_plan(replay: Replay, path: str) -> Any:
    plan_yaml = replay.header.get("plan_yaml")
    if not isinstance(plan_yaml, str):
        raise SfError(f"--replay {path}: the trace has no plan_yaml; give --plan-file too")
    return plan_spec_parse(yaml.safe_load(plan_yaml))


SUBCOMMANDS: list[type[Subcommand]] = [HeadlessCommand]
