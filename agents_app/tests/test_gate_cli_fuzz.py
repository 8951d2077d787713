"""`manage.py sf gate --input …` on any input: a verdict (exit 0) or one line on stderr
(exit 2) — never a traceback, and never a change to the database."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents_app.gate.cli import MAX_INPUT_DEPTH
from agents_app.models import AgentSession, ApprovalRule, Project, RiskDecision
from tests.cli import run_sf

pytestmark = pytest.mark.django_db

_MODELS = (RiskDecision, ApprovalRule, AgentSession, Project)

_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _nested(depth: int, opener: str) -> str:
    """A JSON text nested ``depth`` levels deep: `[[[…]]]` or `{"a": {"a": …}}`."""
    if opener == "[":
        return "[" * depth + "]" * depth
    return '{"command": ' * depth + '"ls"' + "}" * depth


_inputs = st.one_of(
    st.text(),  # anything typed
    st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")),  # random bytes
    _json_values.map(json.dumps),  # JSON of any shape (NaN, Infinity, lone surrogates)
    st.dictionaries(
        st.sampled_from(["command", "path", "cwd", "pattern", "content"]), _json_values
    ).map(json.dumps),  # objects with the keys the tools read
    st.builds(_nested, st.integers(0, 5000), st.sampled_from(["[", "{"])),  # deep nesting
)


def _rows() -> list[int]:
    return [model.objects.count() for model in _MODELS]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    text=_inputs,
    tool=st.sampled_from(["run_command", "read_file", "write_file", "glob", "finish", "nope"]),
    profile=st.sampled_from(["restricted", "normal", "trusted", "unrestricted"]),
)
@example(text=_nested(100_000, "["), tool="run_command", profile="normal")
@example(text=_nested(MAX_INPUT_DEPTH + 1, "{"), tool="run_command", profile="normal")
@example(text='{"command": "\\ud800"}', tool="run_command", profile="normal")
@example(text='{"command": NaN}', tool="run_command", profile="normal")
@example(text='{"command": 1e999}', tool="run_command", profile="normal")
@example(text='{"command": ' + "9" * 5000 + "}", tool="run_command", profile="normal")
@example(text='{"path": "\\u0000"}', tool="write_file", profile="normal")
def test_sf_gate_answers_any_input_with_a_verdict_or_one_line(
    text: str, tool: str, profile: str
) -> None:
    before = _rows()
    # `--input=TEXT`: text that starts with `-` is still the value, not an option.
    args = ("gate", "--profile", profile, "--tool", tool, f"--input={text}")
    code, out, err = run_sf(*args, "--output-format", "json")
    assert code in (0, 2), (code, err)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.startswith("error: --input"), err
        assert err.count("\n") == 1, err
        assert out == ""
    else:
        assert json.loads(out)["decision"] in ("allow", "ask", "deny")
    assert _rows() == before


def test_a_deeply_nested_input_is_refused_in_one_line() -> None:
    code, out, err = run_sf(
        "gate", "--profile", "normal", "--tool", "run_command", "--input", _nested(50_000, "[")
    )
    assert (code, out) == (2, "")
    assert err == "error: --input nests deeper than 32 levels\n"
