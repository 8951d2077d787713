"""Reading plan documents: YAML, JSON, or Markdown with YAML frontmatter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from sf_core.errors import PlanInvalid
from tasks_app.schemas import PlanSpec, plan_spec_parse

MAX_PLAN_BYTES = 2 * 1024 * 1024
FRONTMATTER = "---"


def plan_file_read(path: str | Path) -> PlanSpec:
    """Parse and validate a plan file; every problem raises ``PlanInvalid`` naming it."""
    path = Path(path)
    text = _read(path)
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        data = _yaml(path, text)
    elif suffix == ".json":
        data = _json(path, text)
    elif suffix in (".md", ".markdown"):
        data = _markdown(path, text)
    else:
        raise PlanInvalid(
            f"{path}: unknown plan format {suffix or '(none)'}; use .yaml, .json or .md"
        )
    if not isinstance(data, dict):
        raise PlanInvalid(
            f"{path}: a plan is a mapping with summary and tasks, got {type(data).__name__}"
        )
    return plan_spec_parse(data)


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_PLAN_BYTES:
            raise PlanInvalid(f"{path}: larger than {MAX_PLAN_BYTES // 1024} KiB")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanInvalid(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanInvalid(f"{path}: cannot read: {exc}") from None


def _yaml(path: Path, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise PlanInvalid(f"{path}: invalid YAML{where}: {problem}") from None


def _json(path: Path, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanInvalid(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None


def _markdown(path: Path, text: str) -> Any:
    """Frontmatter holds the plan; the Markdown body is its intent (unless given)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FRONTMATTER:
        raise PlanInvalid(f"{path}: a Markdown plan starts with a --- frontmatter block")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == FRONTMATTER)
    except StopIteration:
        raise PlanInvalid(f"{path}: the frontmatter block is not closed with ---") from None
    data = _yaml(path, "\n".join(lines[1:end]))
    body = "\n".join(lines[end + 1 :]).strip()
    if isinstance(data, dict) and body and not data.get("intent"):
        data["intent"] = body
    return data
