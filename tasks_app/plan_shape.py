"""A model-written plan, shaped by SF's rules before it is stored.

What the model may write is its ``ModelPlanSpec`` (the ``response_format`` schema):
tasks, criteria, verify commands, dependencies, the files each task touches. What SF
decides is not the model's: retries, budgets and mutation scope come from policy
(the schema defaults), so a ``"max_retries": 0`` in an answer is dropped with a note.

Then, deterministically:

- keys made readable: ``Add_Is_Even`` → ``add-is-even``; a run-together key
  (``addmathutilsiseven``) is made from the title instead;
- a test task for one implementation task is merged into it: a function and its test
  are one task (implement + test together), never two parallel ones;
- dependencies inferred: a task whose text names a file another task claims depends on
  it (unless that makes a cycle), so a test never runs in the same wave as its subject.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tasks_app.scheduler import Edge, find_cycle
from tasks_app.schemas import DependencySpec, PlanSpec, TaskSpec, plan_spec_parse

# TaskSpec fields SF sets from policy; a model's values for them are dropped.
POLICY_FIELDS = ("max_retries", "cost_budget", "mutation_scope", "best_of")
MAX_MODEL_TASKS = 12
_RUN_TOGETHER = 14  # a key this long without a hyphen is not readable
_KEY_WORDS = 5
_TEST_WORDS = re.compile(r"^(tests?|add tests?|write tests?|unit tests?)\b", re.IGNORECASE)


class ModelTaskSpec(BaseModel):
    """A task as the planner's model writes it (no policy fields)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="readable lower-case slug of the title, e.g. add-is-even")
    title: str = Field(min_length=1, max_length=200)
    acceptance_criteria: list[str] = Field(min_length=1, description="checkable, R1…Rn")
    verify: list[str] = Field(
        min_length=1, description="shell commands that pass only when the task is done"
    )
    intent_claim: list[str] = Field(description="existing or new files the task changes")
    depends_on: list[str] = Field(default_factory=list, description="keys of earlier tasks")
    task_kind: Literal["implement", "test", "refactor", "docs", "chore"] = "implement"


class ModelPlanSpec(BaseModel):
    """The planner's answer: ``response_format`` constrains the model to it."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(min_length=1, max_length=2_000)
    tasks: list[ModelTaskSpec] = Field(min_length=1, max_length=MAX_MODEL_TASKS)


def plan_shaped(data: Any, intent: str) -> tuple[PlanSpec, list[str]]:
    """The ``PlanSpec`` of a model's answer (``PlanInvalid`` if it is not one) and
    notes on what SF changed in it."""
    notes: list[str] = []
    if isinstance(data, dict):
        if not data.get("intent"):
            data["intent"] = intent
        tasks = data.get("tasks")
        if isinstance(tasks, list):
            _policy_fields_dropped(tasks, notes)
            _keys_readable(tasks, notes)
    spec = plan_spec_parse(data)
    spec = _tests_merged(spec, notes)
    spec = _dependencies_inferred(spec, notes)
    return spec, notes


def _policy_fields_dropped(tasks: list[Any], notes: list[str]) -> None:
    for task in tasks:
        if not isinstance(task, dict):
            continue
        dropped = [name for name in POLICY_FIELDS if task.pop(name, None) is not None]
        if dropped:
            notes.append(f"{task.get('key')}: {', '.join(dropped)} set by policy, not the plan")


def readable_key(key: str, title: str) -> str:
    """``key`` as a lower-case slug; made from the title when it runs words together."""
    slug = _slug(key)
    if title and "-" not in slug and len(slug) >= _RUN_TOGETHER:
        slug = _slug(" ".join(title.split()[:_KEY_WORDS]))
    return slug[:63].strip("-") or "task"


def _slug(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1-\2", text)  # camelCase → camel-case
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _keys_readable(tasks: list[Any], notes: list[str]) -> None:
    renamed: dict[str, str] = {}
    taken: set[str] = set()
    for task in tasks:
        if not isinstance(task, dict) or not isinstance(task.get("key"), str):
            continue
        old = task["key"]
        new = base = readable_key(old, str(task.get("title") or ""))
        suffix = 2
        while new in taken:
            new, suffix = f"{base[:60]}-{suffix}", suffix + 1
        taken.add(new)
        if new != old:
            renamed[old] = task["key"] = new
    for task in tasks:
        if isinstance(task, dict) and isinstance(task.get("depends_on"), list):
            task["depends_on"] = [_renamed(item, renamed) for item in task["depends_on"]]
    if renamed:
        notes.append("keys made readable: " + ", ".join(f"{a} → {b}" for a, b in renamed.items()))


def _renamed(item: Any, renamed: dict[str, str]) -> Any:
    if isinstance(item, str):
        return renamed.get(item, item)
    if isinstance(item, dict) and isinstance(item.get("task"), str):
        return {**item, "task": renamed.get(item["task"], item["task"])}
    return item


def _is_test_task(task: TaskSpec) -> bool:
    return task.task_kind == "test" or bool(_TEST_WORDS.match(task.title))


def _text(task: TaskSpec) -> str:
    return " ".join([task.title, task.description, *task.acceptance_criteria, *task.verify])


def _names_claims_of(text: str, other: TaskSpec) -> bool:
    """Whether ``text`` names a file ``other`` claims (its path, name or module stem)."""
    for claim in other.intent_claim:
        name = claim.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0]
        if claim in text or name in text:
            return True
        if len(stem) >= 4 and re.search(rf"(?<![\w/]){re.escape(stem)}(?!\w)", text):
            return True
    return False


def _subjects(spec: PlanSpec, test: TaskSpec) -> list[TaskSpec]:
    """The implementation tasks a test task is about: those it depends on, or else those
    whose files it names."""
    by_key = {task.key: task for task in spec.tasks}
    named = [by_key[d.task] for d in test.depends_on if d.task in by_key]
    if not named:
        text = _text(test)
        named = [t for t in spec.tasks if t is not test and _names_claims_of(text, t)]
    return [task for task in named if not _is_test_task(task)]


def _tests_merged(spec: PlanSpec, notes: list[str]) -> PlanSpec:
    """A test task about exactly one implementation task, that nothing depends on, is
    part of that task."""
    depended_on = {d.task for task in spec.tasks for d in task.depends_on}
    merged: set[str] = set()
    for test in spec.tasks:
        if not _is_test_task(test) or test.key in depended_on:
            continue
        subjects = _subjects(spec, test)
        if len(subjects) != 1 or subjects[0].key in merged:
            continue
        subject = subjects[0]
        subject.acceptance_criteria += [
            c for c in test.acceptance_criteria if c not in subject.acceptance_criteria
        ]
        subject.verify += [c for c in test.verify if c not in subject.verify]
        subject.intent_claim += [c for c in test.intent_claim if c not in subject.intent_claim]
        subject.depends_on += [
            d for d in test.depends_on if d.task != subject.key and d not in subject.depends_on
        ]
        merged.add(test.key)
        notes.append(f"{test.key} merged into {subject.key}: the code and its test are one task")
    if not merged:
        return spec
    data = spec.model_dump(mode="json")
    data["tasks"] = [task for task in data["tasks"] if task["key"] not in merged]
    return plan_spec_parse(data)


def _dependencies_inferred(spec: PlanSpec, notes: list[str]) -> PlanSpec:
    """B depends on A when B's text names a file A claims and A's names none of B's."""
    keys = [task.key for task in spec.tasks]
    edges = spec.edges()
    for later in spec.tasks:
        text = _text(later)
        for earlier in spec.tasks:
            if earlier is later or any(d.task == earlier.key for d in later.depends_on):
                continue
            if set(earlier.intent_claim) & set(later.intent_claim):
                continue  # the same files: the scheduler serialises them already
            if not _names_claims_of(text, earlier) or _names_claims_of(_text(earlier), later):
                continue
            edge = Edge(later.key, earlier.key, "success")
            if find_cycle(keys, [*edges, edge]):
                continue
            edges.append(edge)
            later.depends_on.append(DependencySpec(task=earlier.key))
            notes.append(f"{later.key} depends on {earlier.key}: it names its files")
    return spec
