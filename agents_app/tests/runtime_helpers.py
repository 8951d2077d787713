"""Helpers for runtime tests: a scripted model through litellm's mock responses."""

from __future__ import annotations

import json
from typing import Any

from agents_app.runtime.llm import complete
from agents_app.runtime.replay import recorded_response

Step = tuple[str, list[tuple[str, Any]]]  # (content, [(tool, arguments)])


class ScriptedModel:
    """Answers each completion with the next scripted step, through litellm's
    ``mock_response`` — the LLM is the one thing these tests simulate."""

    def __init__(self, *steps: Step, cost: float = 0.0) -> None:
        self.steps = list(steps)
        self.cost = cost
        self.calls: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> Any:
        self.calls.append({**kwargs, "messages": [dict(m) for m in kwargs["messages"]]})  # as sent
        content, calls = self.steps.pop(0)
        step = {
            "content": content,
            "tool_calls": [
                {
                    "id": f"c{len(self.calls)}_{i}",
                    "name": tool,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                }
                for i, (tool, args) in enumerate(calls)
            ],
            "tokens_in": 50,
            "tokens_out": 10,
            "cost": self.cost,
        }
        return complete(**kwargs, mock_response=recorded_response(kwargs["model"], step))


class NullHooks:
    def before_model(self) -> str | None:
        return None

    def notes(self) -> list[str]:
        return []

    def before_tool(self, tool: str) -> str | None:
        return None

    def after_tool(self, tool: str, input_hash: str) -> str | None:
        return None
