"""An MCP server's tools as agent tools: named, described, validated and answered.

- Names: ``mcp__<server>__<tool>``, characters outside ``[A-Za-z0-9_-]`` as ``_`` and at
  most 64 characters (the strictest providers' limit); a name cut to fit, or one that
  would collide with another, ends with a short hash of the server and tool.
- Schemas: the server's input schema, with local ``$ref``s inlined (several providers
  refuse them) and ``$schema`` dropped; ``wire.tools_for`` makes it safe per provider
  as it does for every tool. A tool whose schema is not a valid JSON schema is not
  offered.
- Arguments are checked against that schema (``jsonschema``) before the gate sees the
  call, so a malformed call is answered with the problem, as for built-in tools.
- Results: text blocks as they are, other blocks described in one line, structured
  content as JSON when there is no text; an ``isError`` result is an error for the
  model. The loop redacts the text before it is stored or sent anywhere.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jsonschema import SchemaError, validators
from pydantic import BaseModel, ConfigDict, model_validator

from agents_app.gate.mcp import MCP_PREFIX
from agents_app.gate.redaction import redact_text
from agents_app.runtime.mcp_hub import ListedTool, McpCallFailed
from agents_app.runtime.tools import Tool, ToolContext, ToolError, cap

MAX_NAME = 64
MAX_DESCRIPTION = 1000
MAX_REF_DEPTH = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """The namespaced name of ``tool`` of ``server``, unique among ``taken``."""
    name = f"{MCP_PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


class McpArguments(BaseModel):
    """An MCP tool's arguments: any JSON object its input schema accepts."""

    model_config = ConfigDict(extra="allow")
    input_schema: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="before")
    @classmethod
    def _fits_the_schema(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError("the arguments must be a JSON object")
        validator = validators.validator_for(cls.input_schema)(cls.input_schema)
        problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        if problems:
            raise ValueError("; ".join(_problem(error) for error in problems[:5]))
        return data


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def schema_problem(schema: dict[str, Any]) -> str:
    """Why ``schema`` is not a usable input schema ('' when it is)."""
    if schema.get("type", "object") != "object":
        return "its input schema is not an object schema"
    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        return f"its input schema is invalid: {exc.message}"
    return ""


@dataclass(frozen=True)
class McpTool(Tool):
    """A tool of an MCP server, run by the unit's hub."""

    server: str = ""
    remote: str = ""  # the server's own name of the tool
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    def openai_spec(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def mcp_tool(listed: ListedTool, name: str, call: Callable[..., Any]) -> McpTool:
    """The agent tool for ``listed``, named ``name``; ``call(server, tool, arguments)``
    is the hub's."""
    schema = dict(listed.input_schema)
    model = type(f"Arguments_{name}", (McpArguments,), {"input_schema": schema})
    description = " ".join(listed.description.split())[:MAX_DESCRIPTION]

    def run(ctx: ToolContext, arguments: BaseModel) -> str:
        try:
            result = call(listed.server, listed.name, arguments.model_dump())
        except McpCallFailed as exc:
            raise ToolError(str(exc)) from None
        return result_text(result)

    return McpTool(
        name=name,
        schema=model,
        run=run,
        server=listed.server,
        remote=listed.name,
        description=redact_text(f"[MCP server {listed.server}] {description}".strip()),
        parameters=provider_schema(schema),
    )


def provider_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the model is shown: local ``$ref``s inlined, ``$schema`` dropped, an
    object with ``properties`` at the top."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    shown = _inline(copy.deepcopy(schema), definitions, 0)
    for key in ("$schema", "$defs", "definitions", "$id"):
        shown.pop(key, None)
    shown["type"] = "object"
    shown.setdefault("properties", {})
    return shown


def _inline(node: Any, definitions: dict[str, Any], depth: int) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, depth) for item in node]
    if not isinstance(node, dict):
        return node
    reference = node.get("$ref")
    if isinstance(reference, str) and depth < MAX_REF_DEPTH:
        target = definitions.get(reference.rsplit("/", 1)[-1])
        if reference.startswith(("#/$defs/", "#/definitions/")) and isinstance(target, dict):
            merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, definitions, depth + 1)
    return {key: _inline(value, definitions, depth) for key, value in node.items()}


def result_text(result: Any) -> str:
    """What the model is told of a ``CallToolResult`` (``ToolError`` when it is one)."""
    parts = [_block_text(block) for block in getattr(result, "content", None) or []]
    structured = getattr(result, "structured_content", None)
    if not any(parts) and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False, default=str)]
    text = "\n".join(part for part in parts if part) or "(no content)"
    if getattr(result, "is_error", False):
        raise ToolError(f"the tool answered with an error: {cap(text)}")
    return cap(text)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "")) * 3 // 4
        return f"[{kind} {getattr(block, 'mime_type', '')}, about {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {block.uri}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return str(text) if text is not None else f"[resource {resource.uri}, binary, not shown]"
    return f"[{kind or 'unknown'} content, not shown]"
