"""The agent loop against real wire formats: litellm → the fake provider over HTTP.

Issue 18 items 3 (max_tokens, finish_reason length, cut-off calls), 4 (message
shapes), 5 (tool schemas per provider), 8 (calls as text, json_schema) and 9 (redaction
markers never written; hashes on what is stored), asserted on the JSON the provider got.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import sf_native
from agents_app.gate.session import SessionGate
from agents_app.models import AgentSession, TraceEvent
from agents_app.runtime.llm import ModelRouter, complete
from agents_app.runtime.loop import AgentLoop, Outcome
from agents_app.runtime.model_settings import ModelSettings, ToolCallStyle
from agents_app.runtime.tools import TOOLS, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.schemas import PromptProfile
from agents_app.tests.runtime_helpers import NullHooks
from agents_app.tests.test_loop import build_session  # noqa: F401 - fixture
from agents_app.tests.test_textcalls import QWEN_FENCED, QWEN_FINISH
from tests.fake_provider import (
    MISSING,
    FakeProvider,
    anthropic_reply,
    call,
    fake_provider,  # noqa: F401 - fixture
    openai_calls,
    openai_text,
    schema_refused,
    thinking_block,
    tool_use_block,
)

pytestmark = pytest.mark.django_db
FINISH = call("finish", {"summary": "done"})
SECRET = "AKIAZ7QJ3N5R8TXW2PLM"  # not AWS's documented example key, which redaction keeps


def loop_for(
    session: AgentSession,
    worktree: Path,
    provider: FakeProvider,
    model: str = "openai/qwen2.5-coder-1.5b",
    style: str = "native",
    max_tokens: int = 256,
    hooks: Any = None,
    profile: PromptProfile = PromptProfile.AUTO,
) -> AgentLoop:
    base = provider.anthropic_base if model.startswith("anthropic/") else provider.openai_base
    chosen = ModelSettings(
        model, api_base=base, tool_calls=ToolCallStyle(style), prompt_profile=profile
    )

    # The production completion: one HTTP request per router attempt (the client's own
    # retries are off), which the request counts of these tests rely on.
    router = ModelRouter.from_settings(
        chosen, completion=complete, sleep=lambda s: None, max_tokens=max_tokens
    )
    return AgentLoop(
        router=router,
        tools=TOOLS,
        context=ToolContext(worktree=worktree),
        gate=SessionGate(session_id=session.pk, worktree=worktree),
        recorder=TraceRecorder(session=session),
        hooks=hooks or NullHooks(),
    )


def go(loop: AgentLoop, task: str = "do it") -> Any:
    return loop.run(
        [{"role": "system", "content": "You are SF."}, {"role": "user", "content": task}]
    )


# --- item 3: max_tokens and finish_reason ---------------------------------------------


def test_max_tokens_is_sent_and_a_cut_off_call_asks_to_write_in_parts(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    cut = '{"path": "big.py", "content": "x = 1\\nx = 2\\nx ='
    fake_provider.answer(
        openai_calls(call("write_file", cut), finish_reason="length"),
        openai_calls(call("write_file", {"path": "big.py", "content": "x = 1\n"})),
        openai_calls(FINISH),
    )
    result = go(loop_for(build_session, git_repo, fake_provider, max_tokens=300))
    assert result.outcome == Outcome.FINISHED
    assert [r.body["max_tokens"] for r in fake_provider.requests] == [300, 300, 300]
    answered = fake_provider.requests[1].body["messages"][-1]
    assert answered["role"] == "tool"
    assert "cut off at the output limit (300 tokens)" in answered["content"]
    assert "Write in parts" in answered["content"]
    assert "invalid arguments" not in answered["content"]
    assert (git_repo / "big.py").read_text() == "x = 1\n"  # only the complete call ran


def test_a_cut_off_text_answer_is_asked_to_continue(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(
        openai_text("I will now explain the plan in great", "length"), openai_calls(FINISH)
    )
    assert go(loop_for(build_session, git_repo, fake_provider)).outcome == Outcome.FINISHED
    note = fake_provider.requests[1].body["messages"][-1]
    assert note["role"] == "user"
    assert note["content"].startswith("Your answer was cut off at the output limit")


# --- item 4: message shapes ------------------------------------------------------------


def test_null_content_and_null_or_missing_ids_never_reach_the_provider(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(
        openai_text(None),  # said nothing at all
        openai_calls(
            call("read_file", {"path": "README.md"}, id=None),
            call("list_dir", {"path": "."}, id=MISSING),
        ),  # parallel calls, no ids
        openai_calls(FINISH),
    )
    assert go(loop_for(build_session, git_repo, fake_provider)).outcome == Outcome.FINISHED
    sent = fake_provider.requests[2].body["messages"]
    assistants = [m for m in sent if m["role"] == "assistant"]
    assert len(assistants) == 1  # the empty answer was not kept
    assert assistants[0].get("content") in (None, "")  # beside tool calls: no empty text
    ids = [c["id"] for c in assistants[0]["tool_calls"]]
    assert all(ids)
    assert len(set(ids)) == 2
    results = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ids


class NoteOnce:
    """Hooks with one note after the first tool call (a wrap-up, a diagnostic)."""

    def __init__(self) -> None:
        self.calls = 0

    def before_model(self) -> str | None:
        return None

    def notes(self) -> list[str]:
        self.calls += 1
        return ["Wrap up soon."] if self.calls == 2 else []

    def before_tool(self, tool: str) -> str | None:
        return None

    def after_tool(self, tool: str, input_hash: str) -> str | None:
        return None


def test_a_note_after_a_tool_result_goes_into_that_result(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(openai_calls(call("list_dir", {"path": "."})), openai_calls(FINISH))
    loop = loop_for(build_session, git_repo, fake_provider, hooks=NoteOnce())
    assert go(loop).outcome == Outcome.FINISHED
    last = fake_provider.requests[1].body["messages"][-1]
    assert last["role"] == "tool"
    assert last["content"].endswith("[SF] Wrap up soon.")
    roles = [m["role"] for m in fake_provider.requests[1].body["messages"]]
    assert ("tool", "user") not in set(itertools.pairwise(roles))


def test_anthropic_thinking_blocks_are_sent_back_with_their_signature(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(
        anthropic_reply(
            thinking_block("I should list the files", "sig-123"),
            tool_use_block("list_dir", {"path": "."}, "toolu_1"),
            stop_reason="tool_use",
        ),
        anthropic_reply(
            tool_use_block("finish", {"summary": "ok"}, "toolu_2"), stop_reason="tool_use"
        ),
    )
    loop = loop_for(build_session, git_repo, fake_provider, model="anthropic/claude-sonnet-4-5")
    assert go(loop).outcome == Outcome.FINISHED
    sent = fake_provider.requests[1].body
    assert sent["max_tokens"] == 256
    assistant = next(m for m in sent["messages"] if m["role"] == "assistant")
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds[0] == "thinking"
    assert assistant["content"][0]["signature"] == "sig-123"
    assert "tool_use" in kinds
    assert all(b.get("text") != "" for b in assistant["content"])  # no empty text block


# --- item 5: tool schemas per provider ---------------------------------------------------


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node] + [d for value in node.values() for d in _walk(value)]
    if isinstance(node, list):
        return [d for item in node for d in _walk(item)]
    return []


@pytest.mark.parametrize(
    ("model", "additional"),
    [
        ("openai/qwen2.5-coder-1.5b", False),
        ("openai/gpt-4o", True),
        ("anthropic/claude-sonnet-4-5", True),
    ],
)
def test_tool_schemas_are_normalised_for_the_provider(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
    model: str,
    additional: bool,
) -> None:
    finish = (
        anthropic_reply(tool_use_block("finish", {"summary": "ok"}), stop_reason="tool_use")
        if model.startswith("anthropic/")
        else openai_calls(FINISH)
    )
    fake_provider.answer(finish)
    # The full profile's schemas (a small window's compact profile shortens descriptions).
    loop = loop_for(build_session, git_repo, fake_provider, model=model, profile=PromptProfile.FULL)
    assert go(loop).outcome == "finished"
    tools = fake_provider.last["tools"]
    nodes = _walk(tools)
    assert not [n for n in nodes if "title" in n or "default" in n]
    assert not [n for n in nodes if any(o == {"type": "null"} for o in n.get("anyOf", []))]
    assert any("additionalProperties" in n for n in nodes) == additional
    schemas = {t.get("name") or t["function"]["name"]: t for t in tools}
    run = json.dumps(schemas["run_command"])
    assert '"cwd": {"type": "string"' in run  # anyOf [string, null] collapsed
    assert "(default: 120)" in run  # the default survives as words


# --- item 8: calls as text and as a JSON schema --------------------------------------------


def test_qwen_style_text_calls_complete_a_unit(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(openai_text(QWEN_FENCED), openai_text(QWEN_FINISH))
    loop = loop_for(build_session, git_repo, fake_provider, style="text")
    assert go(loop).outcome == Outcome.FINISHED
    assert (git_repo / "hello.py").read_text() == "print('hello')\n"
    first, second = (r.body for r in fake_provider.requests)
    assert first["tools"]
    assert "tool_choice" not in first  # auto, as the loop sends
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == "write_file"


def test_json_schema_style_constrains_and_falls_back_to_text_when_refused(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    fake_provider.answer(
        openai_text(
            json.dumps({"name": "write_file", "arguments": {"path": "a.txt", "content": "a"}})
        ),
        schema_refused(),
        openai_text(QWEN_FINISH),
    )
    loop = loop_for(build_session, git_repo, fake_provider, style="json_schema")
    assert go(loop).outcome == Outcome.FINISHED
    first, refused, after = (r.body for r in fake_provider.requests)
    schema = first["response_format"]["json_schema"]["schema"]
    names = {option["properties"]["name"]["enum"][0] for option in schema["anyOf"]}
    assert {"write_file", "finish"} <= names
    assert "tools" not in first
    assert "response_format" in refused
    assert "response_format" not in after
    assert after["tools"]
    assert (git_repo / "a.txt").read_text() == "a"


# --- item 9: redaction markers ---------------------------------------------------------------


def test_a_rewritten_file_gets_its_secret_back_not_the_marker(
    build_session: AgentSession,  # noqa: F811
    git_repo: Path,
    fake_provider: FakeProvider,  # noqa: F811
) -> None:
    (git_repo / "settings.py").write_text(f'KEY = "{SECRET}"\nDEBUG = True\n')
    fake_provider.answer(
        openai_calls(call("read_file", {"path": "settings.py"})),
        openai_calls(
            call(
                "write_file",
                {
                    "path": "settings.py",
                    "content": 'KEY = "[REDACTED:aws_access_key_id]"\nDEBUG = False\n',
                },
            )
        ),
        openai_calls(
            call(
                "edit_file",
                {
                    "path": "settings.py",
                    "search": 'KEY = "[REDACTED:aws_access_key_id]"',
                    "replace": 'KEY = "[REDACTED:aws_access_key_id]"  # prod',
                },
            )
        ),
        openai_calls(
            call("write_file", {"path": "new.py", "content": "K = '[REDACTED:github_token]'\n"})
        ),
        openai_calls(FINISH),
    )
    assert go(loop_for(build_session, git_repo, fake_provider)).outcome == Outcome.FINISHED
    seen = fake_provider.requests[1].body["messages"][-1]["content"]
    assert SECRET not in seen
    assert "[REDACTED:aws_access_key_id]" in seen
    assert (git_repo / "settings.py").read_text() == f'KEY = "{SECRET}"  # prod\nDEBUG = False\n'
    refused = fake_provider.requests[4].body["messages"][-1]["content"]
    assert "is a redaction marker, not a value" in refused
    assert not (git_repo / "new.py").exists()
    for event in TraceEvent.objects.filter(kind="tool_call").exclude(input_hash=""):
        stored = {"tool": event.name, "input": event.payload["arguments"]}
        assert sf_native.canonical_hash(stored) == event.input_hash  # replayable as stored
    assert not TraceEvent.objects.filter(payload__icontains=SECRET).exists()
