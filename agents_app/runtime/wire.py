"""Message and tool-schema shapes every provider accepts.

- Tool schemas as pydantic emits them carry ``title``, ``default``, ``anyOf`` with
  ``null`` and ``additionalProperties: false``; Gemini and local OpenAI-compatible
  servers are pickier. ``tools_for`` sends titles nowhere, defaults as words in the
  description, ``anyOf [X, null]`` as ``X``, and ``additionalProperties`` only to the
  providers that accept it (OpenAI's own models, Anthropic).
- The assistant message kept in the conversation never has empty content (``None``
  beside tool calls; an answer with neither is not kept), keeps Anthropic's thinking
  blocks (with their signatures, required when tools follow thinking), and every tool
  call has an id (synthesised when a server sends ``null`` or none).
- A note for the model right after tool results goes into the last tool result, not
  as a user message directly after it, which some providers reject.
- Tool-call arguments kept in the conversation are always a JSON object: a model's
  malformed (or cut-off) arguments are answered with the error, and kept as ``{}`` —
  litellm will not convert them for Anthropic, and OpenAI-compatible servers that
  parse the history's arguments (SGLang's router, for one) refuse the whole request.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

ADDITIONAL_PROPERTIES_ACCEPTED = ("anthropic", "azure")
NOTE_PREFIX = "\n\n[SF] "


def synthesised_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def tools_for(model: str, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The OpenAI tool specs, normalised for where ``model`` is served."""
    keep_additional = _accepts_additional_properties(model)
    normalised = []
    for tool in tools:
        tool = copy.deepcopy(tool)
        function = tool["function"]
        function["parameters"] = _schema(function.get("parameters") or {}, keep_additional)
        normalised.append(tool)
    return normalised


def _accepts_additional_properties(model: str) -> bool:
    provider, _, name = model.partition("/")
    if provider in ADDITIONAL_PROPERTIES_ACCEPTED:
        return True
    # OpenAI's own models; "openai/<name>" is also how local servers are reached.
    return (provider == "openai" and name.startswith(("gpt-", "o1", "o3", "o4"))) or (
        not name and provider.startswith(("gpt-", "o1", "o3", "o4"))
    )


def _schema(node: Any, keep_additional: bool) -> Any:
    if isinstance(node, list):
        return [_schema(item, keep_additional) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    node.pop("title", None)
    if "default" in node:
        default = node.pop("default")
        if default not in (None, [], {}):
            described = node.get("description", "")
            node["description"] = f"{described} (default: {default!r})".strip()
    if not keep_additional:
        node.pop("additionalProperties", None)
    options = node.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(kept) == 1 and len(kept) < len(options):
            node.pop("anyOf")
            node = {**kept[0], **node}
    if "properties" in node and isinstance(node["properties"], dict):
        node["properties"] = {
            key: _schema(value, keep_additional) for key, value in node["properties"].items()
        }
    for key in ("items", "anyOf", "oneOf", "allOf", "$defs"):
        if key in node:
            node[key] = _schema(node[key], keep_additional)
    return node


def assistant_message(message: Any, calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The assistant turn to keep, from litellm's message; None when it said nothing."""
    content = message.content if isinstance(message.content, str) else ""
    kept: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        kept["tool_calls"] = calls
    thinking = getattr(message, "thinking_blocks", None)
    if thinking:
        kept["thinking_blocks"] = [dict(block) for block in thinking]
    if not content and not calls:
        return None
    return kept


def append_note(messages: list[dict[str, Any]], note: str) -> None:
    """Tell the model ``note``: inside the last tool result if one is last, else as a
    user message."""
    if messages and messages[-1].get("role") == "tool":
        last = dict(messages[-1])
        last["content"] = f"{last.get('content') or ''}{NOTE_PREFIX}{note}"
        messages[-1] = last
    else:
        messages.append({"role": "user", "content": note})


def well_formed_calls(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with every tool call's arguments a JSON object (``{}`` if they were not)."""
    calls = message.get("tool_calls")
    if not calls or all(_json_object(c.get("function", {}).get("arguments")) for c in calls):
        return message
    fixed = copy.deepcopy(message)
    for call in fixed["tool_calls"]:
        function = call.setdefault("function", {})
        if not _json_object(function.get("arguments")):
            function["arguments"] = "{}"
    return fixed


def _json_object(text: Any) -> bool:
    try:
        return isinstance(json.loads(text or "{}"), dict)
    except (TypeError, json.JSONDecodeError):
        return False
