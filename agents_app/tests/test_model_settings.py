"""Model settings per model mode: environment, a project's override, litellm options."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.test import override_settings

from agents_app.runtime.llm import ModelRouter, complete
from agents_app.runtime.model_settings import (
    LOCAL_PLACEHOLDER_KEY,
    ModelNotConfigured,
    ModelSettings,
    ToolCallStyle,
    model_settings_for,
)
from agents_app.schemas import policy_parse
from sf_core.errors import PolicyInvalid

ROOT = Path(__file__).resolve().parents[2]
LOCAL = "http://127.0.0.1:8080/v1"
ENDPOINTS = {
    "smart": {"api_base": LOCAL, "api_key": "", "tool_calls": "text"},
    "deep": {"api_base": "", "api_key": "sk-deep", "tool_calls": "auto"},
    "fallback": {"api_base": "", "api_key": "", "tool_calls": "auto"},
}


@override_settings(
    SF_MODEL_SMART="openai/qwen2.5-coder-1.5b",
    SF_MODEL_DEEP="openai/gpt-4o",
    SF_MODEL_ENDPOINTS=ENDPOINTS,
)
def test_each_mode_takes_its_endpoint_key_and_style_from_the_environment() -> None:
    smart = model_settings_for("smart")
    assert smart == ModelSettings("openai/qwen2.5-coder-1.5b", LOCAL, "", ToolCallStyle.TEXT)
    # A local server needs no key, but the openai client will not send a request without.
    assert smart.litellm_options() == {"api_base": LOCAL, "api_key": LOCAL_PLACEHOLDER_KEY}
    deep = model_settings_for("deep")
    assert deep.litellm_options() == {"api_key": "sk-deep"}
    assert model_settings_for("deep", "anthropic/claude-x").model == "anthropic/claude-x"


@override_settings(SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS)
def test_auto_is_native_for_models_litellm_knows_and_text_for_the_others() -> None:
    assert ModelSettings("openai/gpt-4o").resolved_style() == ToolCallStyle.NATIVE
    assert ModelSettings("anthropic/claude-sonnet-4-5").resolved_style() == ToolCallStyle.NATIVE
    assert ModelSettings("openai/qwen2.5-coder-1.5b").resolved_style() == ToolCallStyle.TEXT
    assert ModelSettings("ollama/qwen2.5").resolved_style() == ToolCallStyle.TEXT
    pinned = ModelSettings("openai/gpt-4o", tool_calls=ToolCallStyle.JSON_SCHEMA)
    assert pinned.resolved_style() == ToolCallStyle.JSON_SCHEMA


@override_settings(
    SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS, SF_NET_ALLOW_HOSTS=["127.0.0.1"]
)
def test_a_project_overrides_the_environment_field_by_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCAL_QWEN_KEY", "k-123")
    policy = policy_parse(
        {
            "models": {
                "smart": {
                    "model": "openai/qwen2.5-coder-0.5b",
                    "api_base": "http://127.0.0.1:9999/v1/",
                    "api_key_env": "LOCAL_QWEN_KEY",
                    "tool_calls": "json_schema",
                }
            }
        }
    )
    chosen = model_settings_for("smart", None, policy.models)
    assert chosen == ModelSettings(
        "openai/qwen2.5-coder-0.5b",
        "http://127.0.0.1:9999/v1",
        "k-123",
        ToolCallStyle.JSON_SCHEMA,
        pinned=True,
    )
    only_style = policy_parse({"models": {"smart": {"tool_calls": "native"}}}).models
    kept = model_settings_for("smart", None, only_style)
    assert (kept.model, kept.api_base, kept.tool_calls) == ("openai/gpt-4o", LOCAL, "native")
    monkeypatch.delenv("LOCAL_QWEN_KEY")
    with pytest.raises(ModelNotConfigured, match="LOCAL_QWEN_KEY, which is not set"):
        model_settings_for("smart", None, policy.models)


class _Hits(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.hits.append(self.path)
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hits)
    _Hits.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _rebinding_resolver(port: int) -> Any:
    """A resolver that answers a public address the first time, loopback after."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "models.rebind.test":
            return real(host, *args, **kwargs)
        asked.append(host)
        ip = "93.184.216.34" if len(asked) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))]

    return getaddrinfo


@override_settings(SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS)
def test_a_project_api_base_is_pinned_to_the_addresses_the_guard_checked(
    monkeypatch: pytest.MonkeyPatch, loopback_server: int
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _rebinding_resolver(loopback_server))
    base = f"http://models.rebind.test:{loopback_server}/v1"
    models = policy_parse({"models": {"smart": {"model": "openai/m", "api_base": base}}}).models
    chosen = model_settings_for("smart", None, models)  # the first lookup: public
    assert chosen.pinned
    hi = [{"role": "user", "content": "hi"}]
    with pytest.raises(Exception, match="Connection error") as failed:
        complete(model=chosen.model, messages=hi, timeout=10, **chosen.litellm_options())
    assert _Hits.hits == []  # the second lookup's loopback address was never connected
    assert "models.rebind.test is a loopback address (127.0.0.1)" in _causes(failed.value)


def _causes(exc: BaseException | None) -> str:
    """The messages of an exception and of what it was raised from, in turn."""
    seen: list[str] = []
    while exc is not None and len(seen) < 10:
        seen.append(str(exc))
        exc = exc.__cause__ or exc.__context__
    return "\n".join(seen)


@override_settings(
    SF_MODEL_SMART="openai/gpt-4o",
    SF_MODEL_ENDPOINTS=ENDPOINTS,
    SF_NET_TEST_HOSTS={"models.example.com": "93.184.216.34"},
)
def test_a_project_api_base_needs_an_openai_compatible_model() -> None:
    base = "https://models.example.com/v1"
    models = policy_parse({"models": {"smart": {"model": "anthropic/c", "api_base": base}}})
    with pytest.raises(ModelNotConfigured, match=r"needs an openai/<model> .* not anthropic/c"):
        model_settings_for("smart", None, models.models)


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ({"smart": {"api_base": "ftp://x"}}, "models.smart.api_base"),
        ({"smart": {"tool_calls": "xml"}}, "models.smart.tool_calls"),
        ({"smart": {"api_key": "sk-secret"}}, "models.smart.api_key"),  # keys by name only
        ({"huge": {"model": "x"}}, "models.huge"),
    ],
)
def test_bad_project_model_settings_are_refused_by_name(models: dict, message: str) -> None:
    with pytest.raises(PolicyInvalid, match=message):
        policy_parse({"models": models})


@override_settings(
    SF_MODEL_SMART="openai/qwen", SF_MODEL_FALLBACK="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS
)
def test_the_router_sends_the_endpoint_and_the_fallback_its_own() -> None:
    sent: list[dict] = []

    def completion(**kwargs: object) -> object:
        sent.append(kwargs)
        raise RuntimeError("stop")  # not litellm's: re-raised at once

    router = ModelRouter.from_settings(
        model_settings_for("smart"), model_settings_for("fallback"), completion=completion
    )
    assert router.tool_calls == ToolCallStyle.TEXT
    assert router.fallback == "openai/gpt-4o"
    with pytest.raises(RuntimeError):
        router.step([{"role": "user", "content": "hi"}], [])
    assert sent[0]["api_base"] == LOCAL
    assert sent[0]["model"] == "openai/qwen"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("SF_MODEL_SMART_API_BASE", "127.0.0.1:8080", "SF_MODEL_SMART_API_BASE: expected an http"),
        ("SF_MODEL_DEEP_TOOL_CALLS", "xml", "SF_MODEL_DEEP_TOOL_CALLS: expected one of auto"),
        ("SF_MODEL_FAST_API_BASE", "http://h:port/v1", "SF_MODEL_FAST_API_BASE: expected a URL"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(
    variable: str, value: str, expected: str
) -> None:
    env = {**os.environ, "SF_ENV_FILE": "", variable: value}
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert expected in done.stderr


@override_settings(SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS)
@pytest.mark.parametrize(
    "base",
    [
        "http://127.0.0.1:5432/v1",
        "http://localhost:6379",
        "http://169.254.169.254/latest",
        "http://[::ffff:127.0.0.1]:9999/v1",
        "http://[64:ff9b::7f00:1]/v1",
        "http://10.0.0.7:8000/v1",
    ],
)
def test_a_projects_api_base_into_the_servers_network_is_refused(base: str) -> None:
    models = policy_parse({"models": {"smart": {"api_base": base}}}).models
    with pytest.raises(ModelNotConfigured, match=r"api_base .* is refused: .*SF does not connect"):
        model_settings_for("smart", None, models)


@override_settings(SF_MODEL_SMART="openai/gpt-4o", SF_MODEL_ENDPOINTS=ENDPOINTS)
def test_the_servers_own_api_base_stays_allowed_for_a_project() -> None:
    models = policy_parse({"models": {"smart": {"api_base": LOCAL, "model": "openai/q"}}}).models
    assert model_settings_for("smart", None, models).api_base == LOCAL.rstrip("/")
