"""Fuzzing plan files and answers files through the real commands.

``sf plan import`` and ``sf headless --answers`` are given random and structured-hostile
documents (YAML, JSON, Markdown; deep nesting, NUL, lone surrogates, huge strings and
numbers, wrong types, binary bytes, a mismatched extension). Whatever they get, they end
with a usage error (exit 2) or as a good input ends, never a traceback, and a refused
input leaves the database as it was (row counts of projects, sessions, plans, tasks).
The number of examples is bounded so that the module runs in well under a minute.
"""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tasks_app.tests.test_bad_input import GOOD_PLAN, GOOD_TASK, counts, run_sf

pytestmark = pytest.mark.django_db
FUZZ = settings(
    max_examples=120,
    deadline=None,
    database=None,  # no example store: each run explores afresh, nothing written beside
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # the fixtures are read-only here
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

hostile_text = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["\x00", "a\x00b", "\ud800", "x\udfffy", "\ufeff", "\u202e", "\r\n", "---"]),
    st.integers(0, 3).map(lambda n: "z" * (10 ** (n + 2))),  # up to 100 KB
    st.builds(lambda a, b: a + b, st.text(max_size=5), st.sampled_from(["\x00", "\ud83d"])),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = "deep") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if depth % 2 else {"k": value}
    return value


PLAN_FIELDS = ["summary", "intent", "tasks", "extra"]
TASK_FIELDS = [*GOOD_TASK, "depends_on", "max_retries", "cost_budget", "risk_level", "surprise"]


@st.composite
def hostile_plans(draw: st.DrawFn) -> Any:
    """A good plan with one to three fields replaced by something hostile."""
    plan: dict[str, Any] = json.loads(json.dumps(GOOD_PLAN))
    replacement = st.one_of(values, st.integers(1, 60).map(nested))
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            plan[draw(st.sampled_from(PLAN_FIELDS))] = draw(replacement)
        elif isinstance(plan.get("tasks"), list) and plan["tasks"]:
            task = plan["tasks"][0]
            if isinstance(task, dict):
                task[draw(st.sampled_from(TASK_FIELDS))] = draw(replacement)
    return draw(st.sampled_from([plan, [plan], plan.get("tasks"), GOOD_PLAN]))


def serialize(data: Any, fmt: str, body: str) -> str:
    """The document as text in ``fmt``; YAML that PyYAML cannot emit is written as JSON
    (JSON is YAML), which keeps escapes such as \\ud800 for the reader to meet."""
    as_json = json.dumps(data, ensure_ascii=True, allow_nan=True)
    if fmt == "json":
        return as_json
    try:
        as_yaml = yaml.safe_dump(data, allow_unicode=False)
    except (yaml.YAMLError, RecursionError, UnicodeError):
        as_yaml = as_json
    return f"---\n{as_yaml}---\n{body}" if fmt == "md" else as_yaml


def deep_text(depth: int, fmt: str) -> str:
    if fmt == "yaml":
        return "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + "  " * depth + "x\n"
    return "[" * depth + "]" * depth


@st.composite
def documents(draw: st.DrawFn, shape: st.SearchStrategy[Any]) -> tuple[str, bytes]:
    """(file suffix, bytes): structured, random text, random bytes, or very deep text."""
    fmt = draw(st.sampled_from(["yaml", "json", "md"]))
    suffix = draw(st.sampled_from([f".{fmt}", f".{fmt}", ".yml", ".json", ".markdown"]))
    kind = draw(st.sampled_from(["structured", "structured", "text", "bytes", "deep"]))
    if kind == "structured":
        text = serialize(draw(shape), fmt, draw(hostile_text))
    elif kind == "text":
        text = draw(st.text(max_size=200))
    elif kind == "bytes":
        return suffix, draw(st.binary(max_size=300))
    else:
        text = deep_text(draw(st.integers(20, 20_000)), fmt)
    return suffix, text.encode("utf-8", errors="surrogatepass")


@FUZZ
@given(document=documents(hostile_plans()))
def test_plan_import_exits_0_or_2_and_a_refusal_writes_nothing(
    agent_session: Any, document: tuple[str, bytes]
) -> None:
    suffix, content = document
    with TemporaryDirectory() as folder:
        path = Path(folder) / f"plan{suffix}"
        path.write_bytes(content)
        before = counts()
        code, _out, err = run_sf("plan", "import", str(path), "--session", str(agent_session.pk))
    event(f"exit {code}")  # pytest --hypothesis-show-statistics: how many got through
    assert code in (0, 2), err
    if code == 2:
        assert err.startswith("error: "), err
        assert counts() == before
    else:
        assert counts()[2:] == (before[2] + 1, before[3] + 1)  # one plan, its one task


answer_values = st.one_of(values, st.integers(1, 60).map(nested))
NO_MODEL = "error: no model configured for model mode deep"


@pytest.fixture
def no_model(settings: Any) -> None:
    settings.SF_MODEL_DEEP = ""


@st.composite
def hostile_answers(draw: st.DrawFn) -> Any:
    answers = {
        "ask_user": draw(st.dictionaries(hostile_text, hostile_text | answer_values, max_size=3)),
        "approvals": draw(
            st.lists(
                st.fixed_dictionaries(
                    {"tool": hostile_text, "decision": st.sampled_from(["approve", "reject"])},
                    optional={"match": hostile_text, "extra": answer_values},
                ),
                max_size=2,
            )
        ),
    }
    return draw(st.sampled_from([answers, answers["ask_user"], [answers], {}]))


@FUZZ
@given(document=documents(hostile_answers()))
def test_headless_answers_are_refused_or_accepted_and_nothing_is_written(
    git_repo: Path, no_model: None, document: tuple[str, bytes]
) -> None:
    """The run is asked to plan ``--intent`` with no model configured: an answers file
    that is refused ends it there (``error: --answers FILE: …``), one that is accepted
    lets it go on to the check that follows, the model's (``no model configured``).
    Both are exit 2 before anything is written; an in-process run that went further
    would leave the session lock's own database connection open in this test process."""
    suffix, content = document
    with TemporaryDirectory() as folder:
        answers = Path(folder) / f"answers{suffix}"
        answers.write_bytes(content)
        before = counts()
        args = ["--project", str(git_repo), "--intent", "add a flag", "--answers", str(answers)]
        code, out, err = run_sf("headless", *args)
    event("accepted" if err.startswith(NO_MODEL) else "refused")
    assert code == 2, err
    assert err.startswith((f"error: --answers {answers}: ", NO_MODEL)), err
    assert len(err.splitlines()) == 1, err
    assert out == ""
    assert counts() == before
