"""What a model request carries for each tool-call style (``model_settings.ToolCallStyle``).

``native``: the tools, as OpenAI function specs (litellm converts them per provider).
``text``: the same tools, and one line in the system message saying how to write a call
as JSON, for the models that answer with their calls in text (``textcalls`` reads them).
``json_schema``: no ``tools``; ``response_format`` constrains the answer to one JSON
object ``{"name": <a tool>, "arguments": <its arguments>}``, and the system message lists
the tools (without ``tools`` the server's chat template does not show them).

The added lines go only into the request: the stored conversation is unchanged.
"""

from __future__ import annotations

import json
from typing import Any

TEXT_FORMAT_NOTE = (
    "To use a tool, answer with exactly one JSON object and nothing else: "
    '{"name": "<tool name>", "arguments": {<the arguments>}}. One tool call per answer.'
)
# Code is written better in a fenced block than in a JSON string (``editblocks``).
CODE_AFTER_CALL_NOTE = (
    "Code may follow the call instead of being a JSON string: write_file without content, "
    "then the whole file in a ``` block; or edit_file without search and replace, then "
    "blocks of\n<<<<<<< SEARCH\nthe exact current lines\n=======\nthe new lines\n"
    ">>>>>>> REPLACE"
)
SCHEMA_NAME = "tool_call"
CODE_TOOLS = ("write_file", "edit_file")


def request_options(
    style: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> dict[str, Any]:
    """The keyword arguments for litellm besides the model: messages, tools or schema."""
    if style == "json_schema" and tools:
        listing = "\n".join(_tool_line(tool) for tool in tools)
        note = f"{TEXT_FORMAT_NOTE}\nThe tools:\n{listing}"
        return {
            "messages": _with_system_note(messages, note),
            "response_format": tool_call_schema(tools),
        }
    if style == "text" and tools:
        note = TEXT_FORMAT_NOTE
        if any(tool["function"]["name"] in CODE_TOOLS for tool in tools):
            note = f"{note}\n{CODE_AFTER_CALL_NOTE}"
        return {"messages": _with_system_note(messages, note), "tools": tools}
    return {"messages": messages, "tools": tools or None}


def tool_call_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """``response_format`` for "one of the tools with its arguments"."""
    choices = []
    for tool in tools:
        function = tool["function"]
        choices.append(
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": [function["name"]]},
                    "arguments": function.get("parameters") or {"type": "object"},
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    schema = choices[0] if len(choices) == 1 else {"anyOf": choices}
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": False},
    }


def _tool_line(tool: dict[str, Any]) -> str:
    function = tool["function"]
    parameters = function.get("parameters") or {}
    fields = ", ".join(parameters.get("properties", {}))
    required = ", ".join(parameters.get("required", []))
    description = function.get("description", "")
    return (
        f"- {function['name']}({fields}); required: {required or 'none'}. {description}"
    ).strip()


def _with_system_note(messages: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` whose system message ends with ``note``."""
    copied = [dict(message) for message in messages]
    if copied and copied[0].get("role") == "system" and isinstance(copied[0].get("content"), str):
        copied[0]["content"] = f"{copied[0]['content']}\n\n{note}"
    else:
        copied.insert(0, {"role": "system", "content": note})
    return copied


def dumps(arguments: Any) -> str:
    return json.dumps(arguments, ensure_ascii=False)
