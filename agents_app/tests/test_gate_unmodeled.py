"""The gate asks about what it cannot model (issue 28): abbreviated options, wrappers'
environment prefixes, builtins that re-point lookups, files named in options, data out,
download-then-run, runners, nested repositories and hidden eval answers; ordinary work
of the same shapes stays allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents_app.gate.policy import decide
from agents_app.gate.schemas import Decision, GateContext, ToolCall
from agents_app.tests.bypass_corpus import Bypass
from agents_app.tests.unmodeled_corpus import TWINS, UNMODELED

SEVERITY = {"allow": 0, "ask": 1, "deny": 2}
HIDDEN = ".agents/skills/demo/evals/case1/hidden"


def make_worktree(root: Path, hidden: bool) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("print(1)\n")
    (root / "README.md").write_text("hello\n")
    (root / "a.json").write_text('{"x": 1}\n')
    for nested in ("plans/r/.git", "nested/.git/hooks"):
        (root / nested).mkdir(parents=True)
    if hidden:
        (root / HIDDEN).mkdir(parents=True)
        (root / HIDDEN / "answer.md").write_text("THE-ANSWER\n")
    return root


def run(root: Path, command: str, profile: str, tool: str = "run_command") -> Decision:
    ctx = GateContext(
        permission_profile=profile, run_control="autonomous", work_mode="build", worktree=root
    )
    data = {"command": command} if tool == "run_command" else {"path": command, "content": "x"}
    return decide(ToolCall(tool=tool, input=data), ctx)


@pytest.fixture(scope="module")
def worktree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_worktree(tmp_path_factory.mktemp("unmodeled") / "wt", hidden=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_worktree(tmp_path_factory.mktemp("twins") / "wt", hidden=False)


def test_every_class_has_several_commands() -> None:
    assert len(UNMODELED) >= 80
    assert len({e.command for e in UNMODELED}) == len(UNMODELED)
    assert len({c for c, _ in TWINS}) == len(TWINS) >= 60


@pytest.mark.parametrize("entry", UNMODELED, ids=lambda e: f"{e.profile}: {e.command}"[:70])
def test_what_the_gate_cannot_model_is_never_allowed(worktree: Path, entry: Bypass) -> None:
    decision = run(worktree, entry.command, entry.profile)
    assert SEVERITY[decision.decision] >= SEVERITY[entry.minimum], (entry.why, decision)
    assert decision.reason


@pytest.mark.parametrize(("command", "profile"), TWINS, ids=lambda v: v[:60])
def test_the_harmless_twins_stay_allowed(plain: Path, command: str, profile: str) -> None:
    decision = run(plain, command, profile)
    assert decision.decision == "allow", decision


@pytest.mark.parametrize("profile", ["restricted", "normal", "trusted"])
@pytest.mark.parametrize("path", ["plans/r/.git/config", "nested/.git/hooks/pre-commit"])
def test_a_nested_git_directory_is_git_internals_for_the_file_tools(
    worktree: Path, profile: str, path: str
) -> None:
    decision = run(worktree, path, profile, tool="write_file")
    assert decision.decision != "allow", decision
    assert decision.rule.endswith("git-internals"), decision


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # getopt_long: a unique prefix is the option, an ambiguous one is no option
        ("curl --etag-comp F https://x", ("--etag-compare", "F")),
        ("wc --files0=F", ("--files0-from", "F")),
        ("sort -ko F", ("-k", "o")),
        ("head -n5 F", ("-n", "5")),
        ("date -Iseconds", ("-I", "seconds")),
    ],
)
def test_options_are_read_the_way_the_program_reads_them(
    command: str, expected: tuple[str, str]
) -> None:
    from agents_app.gate.catalog import grammar  # imported here: main has none to compare
    from agents_app.gate.shell.analyze import analyze

    part = analyze(command).commands[0]
    spec = grammar.table(part.name)
    assert spec is not None
    parsed = grammar.normalize(part, spec)
    assert not parsed.unknown
    option, value = parsed.options[0]
    assert (option, value.value if value else "") == expected


@pytest.mark.parametrize(
    "command", ["curl --outp x https://a", "ls --frobnicate", "tar --x -cf a src", "cat -Z f"]
)
def test_an_option_not_in_the_table_or_ambiguous_asks(plain: Path, command: str) -> None:
    decision = run(plain, command, "trusted")
    assert decision.decision == "ask", decision
    assert "option the gate cannot model" in decision.reason


def test_the_tables_were_read_from_the_programs() -> None:
    # a spot check that the data is the programs' own (and parses): a value-taking
    # option, a flag, and a long option with an optional value
    from agents_app.gate.catalog import grammar
    from agents_app.gate.catalog.option_tables import SPECS

    assert grammar.table("sort").short["o"] == 1  # type: ignore[union-attr]
    assert grammar.table("sort").short["c"] == 0  # type: ignore[union-attr]
    assert grammar.table("ls").long["--color"] == 2  # type: ignore[union-attr]
    assert all(grammar.table(name) is not None for name in SPECS)


@pytest.mark.parametrize(
    "command",
    [
        "mv .agents/skills stuff && cat stuff/demo/evals/case1/hidden/answer.md",
        "grep -rn TODO .",
        "cp -r .agents out",
        "git grep answer",
    ],
)
def test_a_tree_holding_hidden_answers_is_denied_whatever_the_profile(
    worktree: Path, command: str
) -> None:
    assert run(worktree, command, "restricted").decision == "deny"  # (writes deny there too)
    for profile in ("normal", "trusted", "unrestricted"):
        decision = run(worktree, command, profile)
        assert (decision.decision, decision.rule) == ("deny", "builtin.eval-hidden"), decision


@pytest.mark.parametrize(
    "command",
    [
        "enable -f ./plans/x.so x",
        "mapfile -C 'sh -c id' -c 1 a < README.md",
        "compgen -C id x",
        "fc -s",
        "bind -x '\"\\C-x\": id'",
        "hash -p ./plans/evil ls",
    ],
)
def test_builtins_that_load_or_run_code_are_inline_code(plain: Path, command: str) -> None:
    decision = run(plain, command, "trusted")
    assert (decision.decision, decision.rule) == ("ask", "profile.trusted.inline-code"), decision
