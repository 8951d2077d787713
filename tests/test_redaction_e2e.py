"""Nothing secret is stored, logged, broadcast or sent to a model (end to end)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async

from agents_app.gate.session import SessionGate
from agents_app.models import AgentSession, RiskDecision, TraceEvent
from agents_app.runtime.llm import ModelRouter
from agents_app.runtime.loop import AgentLoop, Outcome
from agents_app.runtime.tools import TOOLS, ToolContext
from agents_app.runtime.trace import TraceRecorder
from agents_app.tests.runtime_helpers import NullHooks, ScriptedModel
from conftest import websocket
from tasks_app.models import Unit
from tasks_app.tests.conftest import make_plan, task_data

pytestmark = [pytest.mark.django_db(transaction=True)]

SECRETS = {
    "aws": "AKIAZ7QJ3N5R8TXW2PLM",
    "github": "ghp_R8sK2mQ9vX4tL7pB1nC6dF3hJ5wY0zA2eG8u",
    "openai": "sk-proj-Vb3N8qR2tY6uI9oP1aS4dF7gH0jK5lZ3xC6vB9nM2qW5eR8t",
    "anthropic": "sk-ant-api03-Qw8Er5Ty2Ui9Op3As6Df1Gh4Jk7Lz0Xc3Vb6Nm9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz9X",
    "slack": "xoxb-2847561930-4857201938-Xk3Lm8Np2Qr7St4Uv9Wx5Yz1",
    "db password": "postgres://deploy:Zq8$wP2m!Lx7Rv4@db.internal:5432/app",
}
ENV_FILE = "\n".join(
    [
        f"AWS_ACCESS_KEY_ID={SECRETS['aws']}",
        f"GITHUB_TOKEN={SECRETS['github']}",
        f"OPENAI_API_KEY={SECRETS['openai']}",
        f"ANTHROPIC_API_KEY={SECRETS['anthropic']}",
        f"SLACK_TOKEN={SECRETS['slack']}",
        f"DATABASE_URL={SECRETS['db password']}",
    ]
)
LEAKS = [
    SECRETS["aws"],
    SECRETS["github"],
    SECRETS["openai"],
    SECRETS["anthropic"],
    SECRETS["slack"],
    "Zq8$wP2m!Lx7Rv4",
]


def leaked(text: str) -> list[str]:
    return [secret for secret in LEAKS if secret in text]


# Kinds a security review found missing: (marker kind, secret, the line it is on).
NEW_KINDS = [
    (
        "google_api_key",
        "AIzaSyhouppeqTMd2qT1XWE1CqxdYGsDccJ91HO",
        "MAPS_URL=https://maps.googleapis.com/maps/api/js?key=AIzaSyhouppeqTMd2qT1XWE1CqxdYGsDccJ91HO",
    ),
    (
        "secret_key",
        "django-insecure-9x#k(2v@q!z7m_l$w3^e8r&t*y)u0i-p=a+s",
        "SECRET_KEY=django-insecure-9x#k(2v@q!z7m_l$w3^e8r&t*y)u0i-p=a+s",
    ),
    ("url_password", "Hq7vN2xK9pLm", "REDIS_URL=redis://:Hq7vN2xK9pLm@cache.internal:6379/0"),
    ("gitlab_token", "glpat-Xk3Lm8Np2Qr7St4Uv9Wx", "GL=glpat-Xk3Lm8Np2Qr7St4Uv9Wx"),
    (
        "twilio_api_key",
        "SK2c7e4f9a1b3d5e6f708192a3b4c5d6e7",
        "TWILIO_API_KEY_SID=SK2c7e4f9a1b3d5e6f708192a3b4c5d6e7",
    ),
    (
        "mailgun_api_key",
        "key-3f9a2c1e8b7d6f5a4c3b2a19k8j7h6g5",
        "MAILGUN=key-3f9a2c1e8b7d6f5a4c3b2a19k8j7h6g5",
    ),
    (
        "sendgrid_api_key",
        "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",
        "SENDGRID=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",
    ),
    (
        "azure_storage_key",
        "k1urN0XtzWbnXjgSTdd8PM5Pp/7vtA3R6DiZezwfg5y9cqBruxXI21kXNxSwH7/1K7wP94pJmBDal6Q0xdTuTB==",
        "AZURE=AccountName=acme;AccountKey=k1urN0XtzWbnXjgSTdd8PM5Pp/7vtA3R6DiZezwfg5y9cqBruxXI21kXNxSwH7/1K7wP94pJmBDal6Q0xdTuTB==;",
    ),
    ("mysql_password", "K8s!vR2qLm9x", "# restore: mysql -u deploy -pK8s!vR2qLm9x app < dump.sql"),
    (
        "aws_secret_access_key",
        "pOnC1/4EakoKm5b/OAYGSTWjRlLK6sNdVU72lZ+o",
        "# AKIAZ7QJ3N5R8TXW2PLM pOnC1/4EakoKm5b/OAYGSTWjRlLK6sNdVU72lZ+o",
    ),
]
# Well-known fakes from AWS's documentation, and a git SHA: they come through as they are.
KEPT = [
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "9fceb02d0ae598e95dc970b74767f19372d61af8",
]
KEPT_LINES = [
    f"# from the AWS docs: aws_access_key_id = {KEPT[0]}",
    f"# aws_secret_access_key = {KEPT[1]}",
    f"# pinned at commit {KEPT[2]}",
]


def run_loop(
    session: AgentSession, worktree: Path, unit_id: int, *steps: Any
) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel(
        *steps
        or (
            ("reading the config", [("read_file", {"path": "config.env"})]),
            (f"the key is {SECRETS['github']}", [("run_command", {"command": "cat config.env"})]),
            (
                "saving a note",
                [("write_file", {"path": "note.txt", "content": f"token {SECRETS['openai']}"})],
            ),
            ("done", [("finish", {"summary": f"used {SECRETS['aws']}"})]),
        )
    )
    loop = AgentLoop(
        router=ModelRouter(model="openai/gpt-4o", completion=model, sleep=lambda s: None),
        tools=TOOLS,
        context=ToolContext(worktree=worktree),
        gate=SessionGate(session_id=session.pk, worktree=worktree, unit_id=unit_id),
        recorder=TraceRecorder(session=session, unit_id=unit_id),
        hooks=NullHooks(),
    )
    return loop.run([{"role": "user", "content": "go"}]), model


@pytest.fixture
def unit(agent_session: AgentSession, git_repo: Path) -> Unit:
    AgentSession.objects.filter(pk=agent_session.pk).update(
        work_mode="build", run_control="autonomous", permission_profile="trusted"
    )
    (git_repo / "config.env").write_text(ENV_FILE + "\n")
    plan = make_plan(agent_session, task_data("secrets"))
    return Unit.objects.create(task=plan.tasks.get(), attempt=1)


@pytest.mark.asyncio
async def test_no_secret_reaches_the_trace_the_model_or_the_websocket(
    session_cookie: bytes, agent_session: AgentSession, git_repo: Path, unit: Unit
) -> None:
    communicator = websocket(f"/ws/units/{unit.pk}/", cookie=session_cookie)
    connected, _ = await communicator.connect()
    assert connected
    frames = [await communicator.receive_from(timeout=5)]
    try:
        result, model = await database_sync_to_async(run_loop)(agent_session, git_repo, unit.pk)
        seqs = await database_sync_to_async(
            lambda: list(TraceEvent.objects.order_by("seq").values_list("seq", flat=True))
        )()
        # Wait for the page to show the last event recorded (however slow the machine),
        # not for whatever arrived within a fixed window.
        async with asyncio.timeout(60):
            while f'data-seq="{seqs[-1]}"' not in frames[-1]:
                frames.append(await communicator.receive_from(timeout=60))
    finally:
        await communicator.disconnect()
    assert result.outcome == Outcome.FINISHED

    rows = await database_sync_to_async(
        lambda: [json.dumps(e.payload) for e in TraceEvent.objects.all()]
    )()
    decisions = await database_sync_to_async(
        lambda: [json.dumps(d.input_normalized) for d in RiskDecision.objects.all()]
    )()
    sent = [json.dumps(call["messages"]) for call in model.calls]

    assert "[REDACTED:github_token]" in " ".join(rows)
    assert "[REDACTED:aws_access_key_id]" in " ".join(rows)
    assert len(seqs) > 3
    for seq in seqs:  # every event reached the page
        assert any(f'data-seq="{seq}"' in frame for frame in frames), seq
    for where, texts in (
        ("trace rows", rows),
        ("decisions", decisions),
        ("model input", sent),
        ("websocket", frames),
    ):
        for text in texts:
            assert leaked(text) == [], f"a secret leaked into {where}"


def test_logs_are_redacted_by_the_configured_handler() -> None:
    handler = next(
        h for h in logging.getLogger("sf").handlers if isinstance(h, logging.StreamHandler)
    )
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        logging.getLogger("sf.test").warning("connecting with %s", SECRETS["db password"])
        logging.getLogger("sf.test").warning(f"token {SECRETS['github']}")
    finally:
        handler.setStream(previous)
    output = stream.getvalue()
    assert leaked(output) == []
    assert "postgres://deploy:[REDACTED:url_password]@db.internal" in output
    assert "[REDACTED:github_token]" in output


def test_tool_output_with_each_new_secret_kind_is_stored_redacted(
    agent_session: AgentSession, git_repo: Path, unit: Unit
) -> None:
    """A file holding every kind the review found missing, read and cat'ed by the
    agent: the trace and what the model is sent hold markers, never the secrets; AWS's
    documented example keys and a git SHA come through unchanged."""
    (git_repo / "services.env").write_text(
        "\n".join([line for _, _, line in NEW_KINDS] + KEPT_LINES)
    )
    result, model = run_loop(
        agent_session,
        git_repo,
        unit.pk,
        ("reading", [("read_file", {"path": "services.env"})]),
        ("and again", [("run_command", {"command": "cat services.env"})]),
        ("done", [("finish", {"summary": "read the service settings"})]),
    )
    assert result.outcome == Outcome.FINISHED
    tool_calls = " ".join(
        json.dumps(e.payload) for e in TraceEvent.objects.filter(kind="tool_call")
    )
    stored = " ".join(json.dumps(e.payload) for e in TraceEvent.objects.all())
    sent = json.dumps([call["messages"] for call in model.calls])
    for kind, secret, _ in NEW_KINDS:
        as_json = json.dumps(secret)[1:-1]
        assert as_json not in stored, f"{kind} stored in the trace"
        assert as_json not in sent, f"{kind} sent to the model"
        assert f"[REDACTED:{kind}]" in tool_calls, f"{kind}: no marker in the tool output"
    for kept in KEPT:
        assert kept in tool_calls
        assert kept in sent
