"""The project's hooks (docs/hooks.md): the policy's schema, matching, what a run's end
does, and runs through the gate and the sandbox — caps, timeouts, precedence, refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agents_app.hook_schemas import Hook, HookTrigger
from agents_app.models import AgentSession, RiskDecision, TraceEvent
from agents_app.runtime.project_hooks import HookEvent, HookRun, ProjectHooks, hook_matches
from agents_app.runtime.replay import Replay, ReplayMiss
from agents_app.runtime.sandbox import bwrap_problem, policy_for
from agents_app.runtime.tools import ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.schemas import policy_parse
from sf_core.errors import PolicyInvalid

needs_bwrap = pytest.mark.skipif(
    bool(bwrap_problem("/usr/bin/bwrap")), reason="bubblewrap is required (scripts/setup.sh)"
)


def hook(**fields: Any) -> Hook:
    return Hook.model_validate({"name": "h", "trigger": "pre_tool", "command": "true", **fields})


# --- the policy's schema ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"trigger": "post_tool", "output": "block"}, "a post_tool hook cannot block"),
        ({"trigger": "session_start", "output": "block"}, "a session_start hook cannot block"),
        ({"trigger": "pre_verify", "match_tools": ["write_file"]}, "apply to pre_tool and"),
        ({"match_command": "git (push"}, "match_command is not a regular expression"),
        ({"match_tools": ["write file"]}, "is not a tool name or glob"),
        ({"trigger": "before_tool"}, "hooks.0.trigger"),
        ({"command": "   "}, "must not be blank"),
        ({"timeout_s": 0}, "hooks.0.timeout_s"),
        ({"max_runs": 0}, "hooks.0.max_runs"),
        ({"name": "Bad Name"}, "hooks.0.name"),
        ({"when": "always"}, "hooks.0.when"),
    ],
)
def test_a_bad_hook_is_refused_naming_what_is_wrong(entry: dict[str, Any], words: str) -> None:
    document = {"hooks": [{"name": "h", "trigger": "pre_tool", "command": "true", **entry}]}
    with pytest.raises(PolicyInvalid, match="invalid project policy") as refused:
        policy_parse(document)
    assert words in str(refused.value)


def test_hook_names_are_unique_in_a_policy() -> None:
    twice = {"name": "lint", "trigger": "post_tool", "command": "true"}
    with pytest.raises(PolicyInvalid, match="lint used more than once"):
        policy_parse({"hooks": [twice, twice]})
    assert policy_parse({"hooks": [twice]}).hooks[0].max_runs == 50


# --- matching ---------------------------------------------------------------------------


def test_a_hook_matches_its_trigger_tools_and_command() -> None:
    write = HookEvent(HookTrigger.PRE_TOOL, "write_file", {"path": "a.txt", "content": "x"})
    push = HookEvent(HookTrigger.PRE_TOOL, "run_command", {"command": "git push -f origin"})
    ls = HookEvent(HookTrigger.PRE_TOOL, "run_command", {"command": "ls"})
    mcp = HookEvent(HookTrigger.PRE_TOOL, "mcp__tickets__close", {})
    assert hook_matches(hook(), write)
    assert hook_matches(hook(), ls)
    assert not hook_matches(hook(trigger="post_tool"), write)
    files = hook(match_tools=["write_file", "edit_file"])
    assert hook_matches(files, write)
    assert not hook_matches(files, ls)
    assert hook_matches(hook(match_tools=["mcp__*"]), mcp)
    assert not hook_matches(hook(match_tools=["mcp__*"]), write)
    force = hook(match_command=r"git\s+push.*(-f|--force)")
    assert hook_matches(force, push)
    assert not hook_matches(force, ls)
    assert not hook_matches(force, write)  # a command matcher only matches run_command
    both = hook(match_tools=["run_command"], match_command="^ls$")
    assert hook_matches(both, ls)
    assert not hook_matches(both, push)


# --- what a run's end does --------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "exit_code", "refused", "effect", "note"),
    [
        ("block", 2, "", "blocked", ""),
        ("block", 0, "", "ran", ""),
        ("block", 1, "", "failed", "failed with exit code 1"),
        ("block", None, "", "failed", "timed out after 60 s"),
        ("note", 0, "", "noted", "says:\nout"),
        ("note", 2, "", "failed", "failed with exit code 2"),
        ("note", None, "the gate denies it", "failed", "did not run: the gate denies it"),
        ("none", 1, "", "failed", ""),
        ("none", 0, "", "ran", ""),
    ],
)
def test_how_a_run_ends_decides_what_it_does(
    output: str, exit_code: int | None, refused: str, effect: str, note: str
) -> None:
    run = HookRun(hook(output=output), exit_code, "out", refused=refused)
    assert run.blocks == (effect == "blocked")
    assert run.effect == effect
    assert (note in run.note()) if note else run.note() == ""


# --- runs through the gate and the sandbox ------------------------------------------------


def _trusted(session: AgentSession, hooks: list[dict[str, Any]], **policy: Any) -> ProjectHooks:
    project = session.project
    project.policy = {**project.policy, "hooks": hooks, **policy}
    project.save()
    AgentSession.objects.filter(pk=session.pk).update(
        permission_profile="trusted", run_control="autonomous", work_mode="build"
    )
    session.refresh_from_db()
    recorder = TraceRecorder(session=session, unit_id=None)
    hooks = session.project.parsed_policy.hooks
    return ProjectHooks(hooks=hooks, session_id=session.pk, unit_id=None, recorder=recorder)


def _context(worktree: Path) -> ToolContext:
    return ToolContext(worktree=worktree, sandbox=lambda: policy_for("trusted", ()))


def _traced(session: AgentSession) -> list[dict[str, Any]]:
    events = TraceEvent.objects.filter(session=session, kind="hook").order_by("seq")
    return [{"name": e.name, **e.payload} for e in events]


@pytest.mark.django_db
@needs_bwrap
def test_a_blocking_hook_stops_the_round_and_sees_the_call(
    agent_session: AgentSession, git_repo: Path
) -> None:
    (git_repo / "guard.py").write_text(
        "import json, os, sys\n"
        "call = json.loads(os.environ['SF_HOOK_INPUT'])\n"
        "if os.environ['SF_HOOK_PATH'].startswith('locked/'):\n"
        "    print('locked/ is read-only,', call['path'], 'too')\n"
        "    sys.exit(2)\n"
    )
    runner = _trusted(
        agent_session,
        [
            {
                "name": "first",
                "trigger": "pre_tool",
                "command": "python3 guard.py",
                "output": "block",
            },
            {
                "name": "second",
                "trigger": "pre_tool",
                "command": "python3 guard.py",
                "output": "note",
            },
        ],
    )
    context = _context(git_repo)
    said = runner.before(context, "write_file", {"path": "locked/a.txt", "content": "x"})
    assert said == (
        "not run: the project's hook first blocked it: locked/ is read-only, locked/a.txt too"
    )
    assert runner.before(context, "write_file", {"path": "open.txt", "content": "x"}) == ""
    traced = _traced(agent_session)
    # The block ended the first round; the second call ran both, neither said anything.
    assert [(t["name"], t["effect"]) for t in traced] == [
        ("first", "blocked"),
        ("first", "ran"),
        ("second", "ran"),
    ]
    assert traced[0]["exit_code"] == 2
    assert traced[0]["tool"] == "write_file"
    assert RiskDecision.objects.filter(reason__startswith="hook first:").count() == 2
    runner.replay = _replayed("wrote 1 bytes to locked/a.txt")  # it ran when recorded
    with pytest.raises(ReplayMiss, match="a hook blocked the call of write_file, which ran"):
        runner.before(context, "write_file", {"path": "locked/a.txt", "content": "x"})


@pytest.mark.django_db
@needs_bwrap
def test_caps_timeouts_and_failures_never_block_and_are_noted(
    agent_session: AgentSession, git_repo: Path
) -> None:
    runner = _trusted(
        agent_session,
        [
            {"name": "slow", "trigger": "post_tool", "command": "sleep 30", "timeout_s": 1},
            {
                "name": "twice",
                "trigger": "post_tool",
                "command": "echo seen $SF_HOOK_TOOL",
                "max_runs": 2,
            },
            {
                "name": "broken",
                "trigger": "post_tool",
                "command": "echo oops; exit 3",
                "output": "none",
            },
        ],
    )
    context = _context(git_repo)
    for _ in range(3):
        runner.after(context, "read_file", {"path": "README.md"}, "contents")
    notes = runner.notes()
    assert notes.count("The project's hook slow timed out after 1 s") == 3
    assert notes.count("The project's hook twice says:\nseen read_file") == 2
    assert not any("broken" in note for note in notes)  # output none: traced only
    assert runner.notes() == []  # each note is given once
    traced = _traced(agent_session)
    twice = [t for t in traced if t["name"] == "twice"]
    assert [t["effect"] for t in twice] == ["noted", "noted", "capped"]
    assert twice[-1]["problem"] == "ran 2 times (max_runs)"
    broken = [t for t in traced if t["name"] == "broken"]
    assert [(t["effect"], t["exit_code"], t["output"]) for t in broken] == [
        ("failed", 3, "oops")
    ] * 3
    assert all(t["seconds"] < 20 for t in traced if t["name"] == "slow")


@pytest.mark.django_db
def test_a_hook_the_gate_denies_does_not_run(agent_session: AgentSession, git_repo: Path) -> None:
    deny = [{"tool": "run_command", "pattern": "touch *", "reason": "no touching"}]
    runner = _trusted(
        agent_session,
        [
            {
                "name": "toucher",
                "trigger": "unit_stop",
                "command": "touch made.txt",
                "output": "block",
            }
        ],
        deny=deny,
    )
    assert runner.stop(_context(git_repo), "done") == ""  # a refusal never blocks
    assert not (git_repo / "made.txt").exists()
    [note] = runner.notes()
    assert note.startswith("The project's hook toucher did not run: the permission gate denies")
    [traced] = _traced(agent_session)
    assert traced["effect"] == "failed"
    assert "no touching" in traced["problem"]
    decision = RiskDecision.objects.get(reason__startswith="hook toucher:")
    assert decision.decision == "deny"


# --- replays ------------------------------------------------------------------------------


def _replayed(output: str) -> Replay:
    call = {"name": "write_file", "input_hash": "h", "output": output}
    return Replay(header={}, model_steps=[], tool_calls=[call], next_call=1)


def test_a_replay_fails_where_no_hook_blocks_a_call_the_recording_blocked(tmp_path: Path) -> None:
    recorded = "not run: the project's hook guard blocked it: locked.txt is protected"
    runner = ProjectHooks(replay=_replayed(recorded))  # the policy has no hooks now
    with pytest.raises(ReplayMiss, match="no hook blocked the call of write_file now"):
        runner.before(_context(tmp_path), "write_file", {"path": "locked.txt"})
    ran = ProjectHooks(replay=_replayed("wrote 5 bytes to locked.txt"))
    assert ran.before(_context(tmp_path), "write_file", {"path": "locked.txt"}) == ""
    handwritten = _replayed(recorded)
    handwritten.tool_calls[0].pop("output")  # a hand-written trace: nothing to compare
    unrecorded = ProjectHooks(replay=handwritten)
    assert unrecorded.before(_context(tmp_path), "write_file", {"path": "locked.txt"}) == ""


def test_the_example_policy_of_the_docs_is_valid() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "hooks.md").read_text()
    found = re.search(r"```json\n(.*?)\n```", text, re.S)
    assert found is not None
    example = json.loads(found.group(1))
    hooks = policy_parse(example).hooks
    assert {hook.trigger for hook in hooks} == set(HookTrigger)
