"""Helpers for a skill eval's ``grader.py`` (docs/skill-evals.md). Standard library only:
a grader runs in its own process with ``PYTHONPATH`` at SF's root and nothing of Django.

    from skills_app.grader_kit import Grader

    g = Grader()
    g.check("answer names the rule", "gate-rules" in g.answer_text(), g.answer_text())
    g.skill_loaded("gate-rules")          # a positive case
    g.skill_not_loaded("headless-contract")  # a negative case
    g.report()                              # prints the JSON, exits 1 if any check failed
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


class Grader:
    def __init__(self) -> None:
        self.workspace = Path(os.environ.get("SF_EVAL_WORKSPACE", "."))
        self.hidden = Path(os.environ.get("SF_EVAL_HIDDEN", "hidden"))
        self.result: dict[str, Any] = _json(os.environ.get("SF_EVAL_RESULT"), {})
        self.answer: dict[str, Any] = _json(os.environ.get("SF_EVAL_ANSWER"), {})
        self.trace: list[dict[str, Any]] = _jsonl(os.environ.get("SF_EVAL_TRACE"))
        self.checks: list[dict[str, Any]] = []

    # --- reading --------------------------------------------------------------------

    def answer_text(self) -> str:
        """The agent's final summary (its ``finish`` call)."""
        return str(self.answer.get("summary") or "")

    def hidden_text(self, name: str) -> str:
        return (self.hidden / name).read_text(encoding="utf-8")

    def file_text(self, name: str) -> str:
        """A workspace file's text ("" when it does not exist)."""
        path = self.workspace / name
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def tool_calls(self, name: str | None = None) -> list[dict[str, Any]]:
        """The executed (or denied) tool calls of the trace, of one tool if named."""
        return [
            record
            for record in self.trace
            if record.get("type") == "tool_call" and (name is None or record.get("name") == name)
        ]

    # --- checks ---------------------------------------------------------------------

    def check(self, name: str, passed: bool, detail: Any = "") -> bool:
        self.checks.append({"name": name, "passed": bool(passed), "detail": str(detail)[:2000]})
        return bool(passed)

    def task_done(self) -> bool:
        status = self.result.get("task_status")
        return self.check("task done", status == "done", f"task {status}")

    def skill_loaded(self, skill: str) -> bool:
        loaded = self.result.get("skills_loaded", [])
        return self.check(f"skill {skill} loaded", skill in loaded, f"loaded: {loaded}")

    def skill_not_loaded(self, skill: str) -> bool:
        """A negative case: the irrelevant ``skill`` was not loaded."""
        loaded = self.result.get("skills_loaded", [])
        return self.check(f"skill {skill} not loaded", skill not in loaded, f"loaded: {loaded}")

    def mentions_all(self, name: str, text: str, words: list[str]) -> bool:
        """``text`` names every one of ``words`` (case-insensitive)."""
        missing = [word for word in words if word.lower() not in text.lower()]
        return self.check(name, not missing, f"missing: {missing}" if missing else "all named")

    def report(self) -> None:
        """Print the checks as the last line; exit 1 unless there are some and all passed."""
        print(json.dumps({"checks": self.checks}))
        sys.exit(0 if self.checks and all(c["passed"] for c in self.checks) else 1)


def _json(path: str | None, default: dict[str, Any]) -> dict[str, Any]:
    if not path or not Path(path).is_file():
        return default
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else default


def _jsonl(path: str | None) -> list[dict[str, Any]]:
    if not path or not Path(path).is_file():
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
