"""MCP configuration and tool shapes: the policy's and mcp.json's schemas with errors
naming the server and the field, risk classes, namespaced names, provider-safe
schemas, arguments checked against the server's schema, and results as text."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import ValidationError

from agents_app.mcp_schemas import McpConfigInvalid, McpPolicy, McpRisk, mcp_json_parse, risk_of
from agents_app.runtime.mcp_hub import ListedTool
from agents_app.runtime.mcp_tools import (
    mcp_tool,
    provider_schema,
    result_text,
    schema_problem,
    tool_name,
)
from agents_app.runtime.tools import ToolError
from agents_app.runtime.wire import tools_for
from agents_app.schemas import policy_parse
from sf_core.errors import PolicyInvalid


def test_a_policy_names_the_server_and_the_field_that_is_wrong() -> None:
    bad = {"mcp": {"servers": {"tracker": {"args": ["x"], "tools": {"lookup": "harmless"}}}}}
    with pytest.raises(PolicyInvalid) as refused:
        policy_parse(bad)
    message = str(refused.value)
    assert "mcp.servers.tracker.command: Field required" in message
    assert "mcp.servers.tracker.tools.lookup" in message


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ({"command": "x", "env": {"TOKEN": "${lower}"}}, "must name a project secret"),
        ({"command": "x", "env": {"1BAD": "v"}}, "not an environment variable name"),
        ({"command": "x", "expose": ["relative/path"]}, "an absolute path other than /"),
        ({"command": "x", "expose": ["/"]}, "an absolute path other than /"),
        ({"command": "x", "url": "https://mcp.example.com"}, "url"),
    ],
)
def test_a_policy_server_is_validated(server: dict[str, Any], expected: str) -> None:
    with pytest.raises(PolicyInvalid, match=expected):
        policy_parse({"mcp": {"servers": {"tracker": server}}})


def test_a_server_name_must_be_usable_in_a_tool_name() -> None:
    with pytest.raises(PolicyInvalid, match="server name 'a b'"):
        policy_parse({"mcp": {"servers": {"a b": {"command": "x"}}}})


def test_mcp_json_is_the_common_shape() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "docs": {"command": "npx", "args": ["-y", "docs-mcp"], "env": {"K": "${DOCS_KEY}"}},
                "files": {"type": "stdio", "command": "files-mcp"},
            }
        }
    )
    servers = mcp_json_parse(text, source="skills/x/mcp.json")
    assert servers["docs"].args == ["-y", "docs-mcp"]
    assert servers["files"].command == "files-mcp"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", "Invalid JSON"),
        ('{"servers": {}}', "mcpServers: Field required"),
        (
            '{"mcpServers": {"web": {"url": "https://x", "command": "y"}}}',
            "mcpServers.web.url: servers reached by URL are not supported",
        ),
        (
            '{"mcpServers": {"web": {"type": "http", "command": "y"}}}',
            "mcpServers.web.type: only stdio servers",
        ),
        (
            '{"mcpServers": {"docs": {"command": "x", "tools": {"a": "read"}}}}',
            "mcpServers.docs.tools: Extra inputs",  # risk classes are the policy's
        ),
    ],
)
def test_a_bad_mcp_json_names_the_file_the_server_and_the_field(text: str, expected: str) -> None:
    with pytest.raises(McpConfigInvalid) as refused:
        mcp_json_parse(text, source=".agents/skills/docs/mcp.json")
    assert str(refused.value).startswith(".agents/skills/docs/mcp.json: ")
    assert expected in str(refused.value)


def test_the_policy_classes_tools_by_name_then_glob_then_the_servers_own() -> None:
    policy = McpPolicy.model_validate(
        {"tools": {"mcp__docs__search": "read", "mcp__docs__*": "external", "mcp__*": "write"}}
    )
    own = {"drop": McpRisk.DESTRUCTIVE}
    assert risk_of("mcp__docs__search", server_tools={}, remote="search", policy=policy) == "read"
    assert risk_of("mcp__docs__post", server_tools={}, remote="post", policy=policy) == "external"
    assert risk_of("mcp__t__drop", server_tools=own, remote="drop", policy=policy) == "write"
    empty = McpPolicy()
    assert risk_of("mcp__t__drop", server_tools=own, remote="drop", policy=empty) == "destructive"
    assert risk_of("mcp__t__other", server_tools=own, remote="other", policy=empty) is None


def test_tool_names_are_namespaced_safe_and_within_64_characters() -> None:
    assert tool_name("tracker", "lookup", set()) == "mcp__tracker__lookup"
    assert tool_name("my.docs", "search/all", set()) == "mcp__my_docs__search_all"
    long = tool_name("server", "x" * 100, set())
    assert len(long) == 64
    assert long.startswith("mcp__server__xxx")
    taken = {"mcp__a_b__c"}
    again = tool_name("a.b", "c", taken)
    assert again != "mcp__a_b__c"
    assert again.startswith("mcp__a_b__c_")


def test_the_models_schema_inlines_references_and_providers_accept_it() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "args",
        "properties": {"item": {"$ref": "#/$defs/Item"}, "n": {"type": "integer", "default": 3}},
        "required": ["item"],
        "$defs": {"Item": {"type": "object", "properties": {"key": {"type": "string"}}}},
    }
    shown = provider_schema(schema)
    assert "$defs" not in shown
    assert "$schema" not in shown
    assert shown["properties"]["item"]["properties"]["key"] == {"type": "string"}
    spec = {"type": "function", "function": {"name": "t", "parameters": shown}}
    [safe] = tools_for("gemini/gemini-2.0-flash", [spec])
    assert "title" not in safe["function"]["parameters"]
    assert "(default: 3)" in safe["function"]["parameters"]["properties"]["n"]["description"]
    assert provider_schema({})["properties"] == {}


def test_a_tool_with_an_unusable_schema_is_refused() -> None:
    assert schema_problem({"type": "array"}) == "its input schema is not an object schema"
    assert "invalid" in schema_problem({"type": "object", "properties": {"a": {"type": 7}}})
    assert schema_problem({"type": "object", "properties": {}}) == ""


def _lookup(calls: list[Any], answer: Any) -> Any:
    listed = ListedTool(
        "tracker",
        "lookup",
        "Look up an item.",
        {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
    )

    def call(server: str, tool: str, arguments: dict[str, Any]) -> Any:
        calls.append((server, tool, arguments))
        return answer

    return mcp_tool(listed, "mcp__tracker__lookup", call)


def test_arguments_are_checked_against_the_servers_schema() -> None:
    calls: list[Any] = []
    tool = _lookup(calls, SimpleNamespace(content=[SimpleNamespace(type="text", text="open")]))
    with pytest.raises(ValidationError, match="'key' is a required property"):
        tool.parse({})
    with pytest.raises(ValidationError, match="key: 7 is not of type 'string'"):
        tool.parse({"key": 7})
    parsed = tool.parse({"key": "a1"})
    assert parsed.model_dump() == {"key": "a1"}
    assert tool.run(None, parsed) == "open"  # type: ignore[arg-type]
    assert calls == [("tracker", "lookup", {"key": "a1"})]
    spec = tool.openai_spec()["function"]
    assert spec["name"] == "mcp__tracker__lookup"
    assert spec["description"] == "[MCP server tracker] Look up an item."


def test_results_become_text_and_an_error_result_is_an_error() -> None:
    text = SimpleNamespace(type="text", text="first")
    image = SimpleNamespace(type="image", data="AAAA", mime_type="image/png")
    resource = SimpleNamespace(
        type="resource", resource=SimpleNamespace(text="inside", uri="file:///a")
    )
    result = SimpleNamespace(content=[text, image, resource], is_error=False)
    assert result_text(result) == "first\n[image image/png, about 3 bytes, not shown]\ninside"
    structured = SimpleNamespace(content=[], structured_content={"n": 1}, is_error=False)
    assert result_text(structured) == '{"n": 1}'
    with pytest.raises(ToolError, match="the tool answered with an error: no such item"):
        result_text(
            SimpleNamespace(
                content=[SimpleNamespace(type="text", text="no such item")], is_error=True
            )
        )
