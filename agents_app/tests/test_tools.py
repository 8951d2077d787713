"""The agent's tools, on a real directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from agents_app.runtime.sandbox import sandbox_state
from agents_app.runtime.tools import (
    MAX_OUTPUT_CHARS,
    TOOLS,
    Finished,
    NeedsPerson,
    ToolContext,
    ToolError,
    validation_message,
)


class _Skills:
    def load(self, name: str, file: str = "") -> str:
        return f"{file or 'body'} of {name}"

    def search(self, text: str) -> str:
        return f"skills about {text}"

    def command_ran(self, command: str, exit_code: int | None) -> None:
        self.ran = (command, exit_code)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "README.md").write_text("# demo\n")
    return ToolContext(
        worktree=tmp_path,
        skills=_Skills(),
        answers={"Which DB?": "PostgreSQL"},
    )


def run(ctx: ToolContext, tool: str, **arguments: object) -> str:
    spec = TOOLS[tool]
    return spec.run(ctx, spec.parse(arguments))


def test_read_file_numbers_lines_and_pages(ctx: ToolContext) -> None:
    assert (
        run(ctx, "read_file", path="src/app.py")
        == "     1\tdef add(a, b):\n     2\t    return a - b"
    )
    assert run(ctx, "read_file", path="src/app.py", offset=2, limit=1) == "     2\t    return a - b"


def test_write_then_edit_with_fuzzy_matching(ctx: ToolContext) -> None:
    assert (
        run(ctx, "write_file", path="pkg/new.py", content="x = 1\n")
        == "wrote 6 bytes to pkg/new.py"
    )
    message = run(
        ctx, "edit_file", path="src/app.py", search="return a - b", replace="return a + b"
    )
    assert message.startswith("edited src/app.py lines 2-2")
    assert (ctx.worktree / "src" / "app.py").read_text().endswith("return a + b\n")


def test_edit_failures_are_tool_errors_with_the_reason(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"src/app\.py"):
        run(ctx, "edit_file", path="src/app.py", search="nothing like this at all", replace="x")


def test_a_search_for_code_not_yet_there_says_how_to_add_it(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as refused:
        run(ctx, "edit_file", path="src/app.py", search="def farewell(name)", replace="x")
    assert "search for the line it goes after" in str(refused.value)
    assert "write_file" in str(refused.value)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "src/../../x"])
def test_paths_outside_the_worktree_are_refused(ctx: ToolContext, path: str) -> None:
    with pytest.raises(ToolError, match="outside the worktree"):
        run(ctx, "write_file", path=path, content="x")


def test_a_symlink_out_of_the_worktree_is_refused(
    ctx: ToolContext, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (ctx.worktree / "link").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the worktree"):
        run(ctx, "write_file", path="link/file.txt", content="x")
    assert not (outside / "file.txt").exists()


def test_grep_glob_and_list_dir(ctx: ToolContext) -> None:
    assert run(ctx, "grep", pattern=r"return a \- b") == "src/app.py:2:5:     return a - b"
    assert run(ctx, "glob", pattern="**/*.py") == "src/app.py"
    assert run(ctx, "list_dir") == "README.md\nsrc/"
    assert run(ctx, "grep", pattern="nope") == "no matches"


def test_run_command_reports_exit_code_and_output(ctx: ToolContext) -> None:
    assert run(ctx, "run_command", command="echo hi; exit 3") == "exit code 3\nhi\n"
    assert run(ctx, "run_command", command="pwd", cwd="src").strip().endswith("/src")


def test_run_command_never_sees_sfs_secrets(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    output = run(ctx, "run_command", command="env")
    assert "sk-should-not-leak" not in output
    assert "DATABASE_URL" not in output
    # In the sandbox HOME is the user's, emptied (tmpfs); without it, the worktree.
    home = os.environ["HOME"] if sandbox_state().sandboxed else str(ctx.worktree)
    assert f"HOME={home}\n" in output
    assert os.environ["OPENAI_API_KEY"] == "sk-should-not-leak"


def test_run_command_times_out(ctx: ToolContext) -> None:
    assert run(ctx, "run_command", command="sleep 5", timeout_s=1).startswith("timed out after 1 s")


def test_long_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    output = run(ctx, "run_command", command="echo START; yes x | head -c 100000; echo; echo END")
    assert len(output) < MAX_OUTPUT_CHARS + 100
    assert "START" in output
    assert output.rstrip().endswith("END")
    assert "characters cut" in output


def test_skills_questions_and_finish(ctx: ToolContext) -> None:
    assert run(ctx, "load_skill", name="deploy") == "body of deploy"
    assert run(ctx, "load_skill", name="deploy", file="checklists/a.md") == (
        "checklists/a.md of deploy"
    )
    assert run(ctx, "load_skill", search="release notes") == "skills about release notes"
    with pytest.raises(ToolError, match="name the skill"):
        run(ctx, "load_skill")
    assert run(ctx, "ask_user", question="Which DB?") == "PostgreSQL"
    with pytest.raises(NeedsPerson, match="Which port"):
        run(ctx, "ask_user", question="Which port?")
    with pytest.raises(Finished) as finished:
        run(ctx, "finish", summary="all done")
    assert finished.value.summary == "all done"


def test_malformed_input_gives_a_message_for_the_model() -> None:
    with pytest.raises(ValidationError) as caught:
        TOOLS["read_file"].parse({"path": "", "limit": 0, "colour": "red"})
    message = validation_message("read_file", caught.value)
    assert message.startswith("invalid arguments for read_file: ")
    assert "path: String should have at least 1 character" in message
    assert "limit: Input should be greater than or equal to 1" in message
    assert "colour: Extra inputs are not permitted" in message


def test_every_tool_has_an_openai_schema() -> None:
    for name, tool in TOOLS.items():
        spec = tool.openai_spec()
        assert spec["function"]["name"] == name
        assert spec["function"]["description"]
        assert spec["function"]["parameters"]["type"] == "object"
