"""What the model is told of a tool's parameters: a type's short name, and the compact
spec a small model gets (kept apart from ``tools`` so that module holds the tools)."""

from __future__ import annotations

import copy
from typing import Any


def type_name(spec: dict[str, Any]) -> str:
    """A JSON-schema type as the model reads it: ``string``, ``integer|null``."""
    if "type" in spec:
        return str(spec["type"])
    return "|".join(str(option.get("type", "?")) for option in spec.get("anyOf", [])) or "any"


COMPACT_SCHEMA_KEYS = ("type", "items", "enum")


def compact_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A tool spec for the compact profile: the tool's first sentence, and parameters
    without their titles, descriptions and defaults (each spec is sent at every step)."""
    function = spec["function"]
    parameters = copy.deepcopy(function.get("parameters") or {})
    for key in ("description", "additionalProperties", "title"):
        parameters.pop(key, None)
    properties = parameters.get("properties", {})
    for name, field_schema in properties.items():
        # The limits stay enforced where the call is validated (``Tool.parse``).
        properties[name] = {
            key: value for key, value in field_schema.items() if key in COMPACT_SCHEMA_KEYS
        } or {"type": type_name(field_schema).split("|")[0]}
    description = function.get("description", "").split(". ")[0].rstrip(".")
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": description,
            "parameters": parameters,
        },
    }
