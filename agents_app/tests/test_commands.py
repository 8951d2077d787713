"""The slash-command grammar."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents_app.commands import Next, Pause, Query, SetAxes, SkillCommand, Steer, Stop, parse
from sf_core.errors import CommandRejected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/mode build", SetAxes({"work_mode": "build"})),
        (
            "/mode build --autonomous",
            SetAxes({"work_mode": "build", "run_control": "autonomous"}, resume=True),
        ),
        (
            "/mode research --autonomous --permission-profile restricted --model-mode deep",
            SetAxes(
                {
                    "work_mode": "research",
                    "run_control": "autonomous",
                    "permission_profile": "restricted",
                    "model_mode": "deep",
                },
                resume=True,
            ),
        ),
        (
            "/mode repair --permission-profile=normal",
            SetAxes({"work_mode": "repair", "permission_profile": "normal"}),
        ),
        ("/control manual", SetAxes({"run_control": "manual"}, resume=True)),
        ("/control assisted", SetAxes({"run_control": "assisted"}, resume=True)),
        ("/autonomous", SetAxes({"run_control": "autonomous"}, resume=True)),
        ("/next", Next()),
        ("/pause", Pause()),
        ("/stop", Stop()),
        ("/permission-profile trusted", SetAxes({"permission_profile": "trusted"})),
        ("/trust unrestricted", SetAxes({"permission_profile": "unrestricted"})),
        ("/model-mode fast", SetAxes({"model_mode": "fast"})),
        ("/steer mode repair", Steer({"work_mode": "repair"}, "now")),
        (
            "/steer mode review after-current-unit",
            Steer({"work_mode": "review"}, "after-current-unit"),
        ),
        (
            "/steer permission-profile restricted now",
            Steer({"permission_profile": "restricted"}, "now"),
        ),
        ("/steer model-mode deep next-milestone", Steer({"model_mode": "deep"}, "next-milestone")),
        (
            "/steer control manual after-current-tool",
            Steer({"run_control": "manual"}, "after-current-tool"),
        ),
        ("/repair", SetAxes({"work_mode": "repair"})),
        (
            "/repair --autonomous",
            SetAxes({"work_mode": "repair", "run_control": "autonomous"}, resume=True),
        ),
        (
            "/trust unrestricted --confirm",
            SetAxes({"permission_profile": "unrestricted"}, confirmed=True),
        ),
        (
            "/permission-profile unrestricted --confirm",
            SetAxes({"permission_profile": "unrestricted"}, confirmed=True),
        ),
        (
            "/mode build --permission-profile unrestricted --confirm",
            SetAxes({"work_mode": "build", "permission_profile": "unrestricted"}, confirmed=True),
        ),
        (
            "/steer permission-profile unrestricted --confirm",
            Steer({"permission_profile": "unrestricted"}, "now", confirmed=True),
        ),
        (
            "/steer permission-profile unrestricted after-current-unit --confirm",
            Steer({"permission_profile": "unrestricted"}, "after-current-unit", confirmed=True),
        ),
        ("/status", Query("status")),
        ("/tasks", Query("tasks")),
        ("/cost", Query("cost")),
        ("/session-report", Query("session-report")),
        ("   /status   ", Query("status")),
        ("/skills", SkillCommand()),
        ("/skill release-notes", SkillCommand(name="release-notes")),
        (
            "/skill release-notes --since 'last tag' v2",
            SkillCommand(name="release-notes", args="--since 'last tag' v2"),
        ),
    ],
)
def test_it_parses_every_command(text: str, expected: object) -> None:
    assert parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty command; type a command such as /status"),
        ("status", "commands start with /, e.g. /status; got 'status'"),
        ("/", "missing command name after /"),
        ("/sf mode build", "/sf is not a command root; use the direct command, e.g. /mode build"),
        ("/sf", "/sf is not a command root"),
        ("/fly", "unknown command /fly; accepted: /mode, /control, /autonomous, /next, /pause"),
        ("/mode", "/mode takes one value: chat|plan|build|review|repair|research"),
        (
            "/mode dance",
            "unknown value 'dance' for /mode; accepted: chat, plan, build, review, repair, research",
        ),
        ("/mode build plan", "/mode takes one value"),
        (
            "/mode build --fast",
            "unknown option --fast for /mode; accepted: --autonomous, --permission-profile, --model-mode",
        ),
        ("/mode build --permission-profile", "option --permission-profile needs a value"),
        (
            "/mode build --permission-profile god",
            "unknown value 'god' for /mode --permission-profile; accepted: restricted, normal, trusted, unrestricted",
        ),
        (
            "/mode build --model-mode=ultra",
            "unknown value 'ultra' for /mode --model-mode; accepted: fast, smart, deep",
        ),
        ("/mode build --autonomous --autonomous", "option --autonomous given twice"),
        ("/mode build --autonomous=yes", "option --autonomous takes no value"),
        (
            "/control auto",
            "unknown value 'auto' for /control; accepted: manual, assisted, autonomous",
        ),
        ("/autonomous now", "/autonomous takes no arguments; got 'now'"),
        ("/trust", "/trust takes one value: restricted|normal|trusted|unrestricted"),
        (
            "/steer mode",
            "usage: /steer mode|permission-profile|model-mode|control VALUE [now|after-current-tool|after-current-unit|next-milestone]",
        ),
        (
            "/steer mood happy",
            "/steer cannot change 'mood'; accepted: mode, control, permission-profile, model-mode",
        ),
        (
            "/steer model-mode deep for-next-unit",
            "unknown scope 'for-next-unit'; accepted: now, after-current-tool, after-current-unit, next-milestone",
        ),
        ("/steer mode sideways", "unknown value 'sideways' for /steer mode"),
        ('/mode "build', "cannot read the command: No closing quotation"),
        ("/repair now", "/repair takes no value; got 'now'"),
        ("/status --verbose", "/status takes no arguments"),
        ("/control manual --confirm", "unknown option --confirm for /control; accepted: none"),
        ("/next --confirm", "/next takes no arguments"),
        (
            "/steer mode build now --force",
            "unknown option --force for /steer; accepted: --confirm",
        ),
        ("/trust unrestricted --confirm=yes", "option --confirm takes no value"),
        ("/" + "x" * 3000, "command too long (3001 characters, at most 2000)"),
        ("/skill", "usage: /skill NAME [arguments]; /skills lists the skills"),
        ("/skills all", "/skills takes no arguments; got 'all'"),
    ],
)
def test_bad_input_gets_one_line_naming_what_was_wrong(text: str, message: str) -> None:
    with pytest.raises(CommandRejected) as caught:
        parse(text)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


COMMAND_WORDS = st.sampled_from(
    ["/mode", "/control", "/steer", "/trust", "/model-mode", "/sf", "/status", "/repair", "/next"]
)
ARG_WORDS = st.sampled_from(
    [
        "build",
        "autonomous",
        "--autonomous",
        "--permission-profile",
        "--model-mode=deep",
        "now",
        "mode",
        "trusted",
        "'",
        '"',
        "\\",
        "--",
        "=",
        "after-current-unit",
        "\x00",
        "é",
    ]
)


def rejection(text: str) -> str | None:
    """The parser's one-line message, or None if the text parsed. Any other exception
    escapes and fails the test."""
    try:
        parse(text)
    except CommandRejected as exc:
        return str(exc)
    return None


@settings(max_examples=500)
@given(st.text(max_size=80))
def test_fuzz_any_text_raises_nothing_but_the_parsers_error(text: str) -> None:
    message = rejection(text)
    assert message is None or (message and "\n" not in message)


@settings(max_examples=1000)
@given(COMMAND_WORDS, st.lists(ARG_WORDS | st.text(max_size=8), max_size=6))
def test_fuzz_command_shaped_text_raises_nothing_but_the_parsers_error(
    command: str, args: list[str]
) -> None:
    message = rejection(" ".join([command, *args]))
    assert message is None or (message and "\n" not in message)
