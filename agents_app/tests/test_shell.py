"""The shell analyser lists every command that would run, or says it cannot."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from agents_app.gate.shell.analyze import analyze


def names(command: str) -> list[str]:
    return sorted(c.name for c in analyze(command).commands)


def argvs(command: str) -> list[tuple[str, ...]]:
    return [c.argv for c in analyze(command).commands]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls; rm x", ["ls", "rm"]),
        ("ls && rm x || echo no", ["echo", "ls", "rm"]),
        ("ls | grep a | wc -l", ["grep", "ls", "wc"]),
        ("ls & rm x", ["ls", "rm"]),
        ("ls\nrm x\n", ["ls", "rm"]),
        ("(cd src && rm x)", ["cd", "rm"]),
        ("{ ls; rm x; }", ["ls", "rm"]),
        ("echo $(rm x)", ["echo", "rm"]),
        ("echo `rm x`", ["echo", "rm"]),
        ("diff <(ls a) <(ls b)", ["diff", "ls", "ls"]),
        ("echo hi > >(tee log)", ["echo", "tee"]),
        (
            "if test -f a; then rm a; elif true; then ls; else pwd; fi",
            ["ls", "pwd", "rm", "test", "true"],
        ),
        ("for f in *.py; do wc -l $f; done", ["wc"]),
        ("while read l; do echo $l; done < in", ["echo", "read"]),
        ("case $x in a) rm a;; b) ls;; esac", ["ls", "rm"]),
        ("f() { rm x; }; f", ["f", "rm"]),
        ("x=$(whoami)", ["", "whoami"]),
        ("export A=$(id) B=2", ["export", "id"]),
        ("[[ -f $(rm x) ]]", ["rm"]),
        ("echo ${x:-$(rm y)}", ["echo", "rm"]),
        ("a=(1 $(rm q))", ["", "rm"]),
        ("cat <<EOF\n$(rm x)\nEOF\n", ["cat", "rm"]),
        ("! ls", ["ls"]),
    ],
)
def test_it_lists_every_simple_command(command: str, expected: list[str]) -> None:
    analysis = analyze(command)
    assert not analysis.opaque, analysis.reason
    assert names(command) == expected


@pytest.mark.parametrize(
    ("command", "argv", "via"),
    [
        ("env A=1 B=2 rm -rf x", ("rm", "-rf", "x"), ("env",)),
        ("env -i -u HOME rm x", ("rm", "x"), ("env",)),
        ("sudo -u bob -E rm x", ("rm", "x"), ("sudo",)),
        ("doas -u bob rm x", ("rm", "x"), ("doas",)),
        ("nohup rm x", ("rm", "x"), ("nohup",)),
        ("timeout -s KILL 5 rm x", ("rm", "x"), ("timeout",)),
        ("timeout --signal=KILL 5s rm x", ("rm", "x"), ("timeout",)),
        ("nice -n 5 rm x", ("rm", "x"), ("nice",)),
        ("time -p rm x", ("rm", "x"), ("time",)),
        ("command rm x", ("rm", "x"), ("command",)),
        ("exec rm x", ("rm", "x"), ("exec",)),
        ("xargs -0 -n 1 rm -f", ("rm", "-f"), ("xargs",)),
        ("sh -c 'rm x'", ("rm", "x"), ("sh -c",)),
        ("bash -lc 'rm x'", ("rm", "x"), ("bash -c",)),
        ("zsh -o pipefail -c 'rm x'", ("rm", "x"), ("zsh -c",)),
        ("dash -c 'rm x' name arg", ("rm", "x"), ("dash -c",)),
        ("eval 'rm x'", ("rm", "x"), ("eval",)),
        ("sudo sh -c 'rm x'", ("rm", "x"), ("sudo", "sh -c")),
        ("watch -n 1 'rm x'", ("rm", "x"), ("watch",)),
        ("busybox rm x", ("rm", "x"), ("busybox",)),
        ("su -c 'rm x' bob", ("rm", "x"), ("su",)),
        ("flock /tmp/l rm x", ("rm", "x"), ("flock",)),
    ],
)
def test_it_sees_through_wrappers(
    command: str, argv: tuple[str, ...], via: tuple[str, ...]
) -> None:
    analysis = analyze(command)
    assert not analysis.opaque, analysis.reason
    assert [(c.argv, c.via) for c in analysis.commands] == [(argv, via)]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("uv run --with rich pytest -q", ("pytest", "-q")),
        ("npx -y tsc -p .", ("tsc", "-p", ".")),
        ("poetry run pytest", ("pytest",)),
        ("pipx run black .", ("black", ".")),
    ],
)
def test_a_runner_is_judged_itself_and_so_is_what_it_runs(
    command: str, argv: tuple[str, ...]
) -> None:
    # uv run/npx resolve the name in the project's environment or download it: the
    # runner is a command of its own, not only a wrapper to see through.
    analysis = analyze(command)
    assert not analysis.opaque, analysis.reason
    assert [c.argv for c in analysis.commands] == [tuple(command.split()), argv]


def test_find_exec_runs_its_command_on_the_roots() -> None:
    analysis = analyze("find src -name '*.pyc' -exec rm -f {} \\; -print")
    assert [(c.argv, c.via) for c in analysis.commands] == [
        (("find", "src", "-name", "*.pyc", "-print"), ()),
        (("rm", "-f", "src"), ("find -exec",)),
    ]


def test_find_exec_with_follow_marks_its_arguments_unknown() -> None:
    inner = analyze("find -L . -execdir cat {} +").commands[1]
    assert inner.via == ("find -execdir",)
    assert inner.stdin_args
    assert inner.dynamic


def test_xargs_adds_arguments_at_run_time() -> None:
    command = analyze("git ls-files | xargs wc -l").commands[1]
    assert command.stdin_args
    assert command.dynamic


def test_a_command_for_xargs_defaults_to_echo() -> None:
    assert argvs("ls | xargs") == [("ls",), ("echo",)]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("$'\\x72\\x6d' -rf /", ("rm", "-rf", "/")),
        ("$'\\162\\155' x", ("rm", "x")),
        ("$'a\\tb\\u00e9\\cA'", ("a\tbé\x01",)),
        ("r\\m x", ("rm", "x")),
        ("'r''m' x", ("rm", "x")),
        ('r"m" x', ("rm", "x")),
        ("\\rm x", ("rm", "x")),
        ("find . -e\\xec ls \\;", ("find", ".")),
        ('echo "a \\$b \\" \\\\ \\q"', ("echo", 'a $b " \\ \\q')),
        ("ls \\\n -la", ("ls", "-la")),
    ],
)
def test_it_decodes_words_the_way_bash_does(command: str, argv: tuple[str, ...]) -> None:
    assert argvs(command)[0] == argv


def test_it_resolves_the_command_name_to_a_basename() -> None:
    (command,) = analyze("/usr/bin/rm -rf x").commands
    assert (command.name, command.program) == ("rm", "/usr/bin/rm")
    assert analyze("./rm x").commands[0].name == "rm"


def test_it_strips_and_records_leading_assignments() -> None:
    (command,) = analyze("LANG=C FOO=$(id) sort x").commands[-1:]
    assert command.argv == ("sort", "x")
    assert command.assignments == ("LANG", "FOO")


def test_it_records_flags_up_to_a_double_dash() -> None:
    (command,) = analyze("rm -rf --verbose -- -x").commands
    assert command.flags == ("-rf", "--verbose")


@pytest.mark.parametrize(
    ("command", "dynamic"),
    [
        ("rm $HOME/x", True),
        ('rm "$x"', True),
        ("rm $(ls)", True),
        ("rm *.pyc", True),
        ("rm a[12]", True),
        ("rm x{a,b}", True),
        ("rm {1..3}", True),
        ("rm 'a*'", False),
        ("rm a\\*", False),
        ("rm x", False),
        ("git log @{u}", False),
    ],
)
def test_it_marks_words_known_only_at_run_time(command: str, dynamic: bool) -> None:
    assert analyze(command).commands[-1].dynamic is dynamic


@pytest.mark.parametrize(
    ("command", "redirects"),
    [
        ("ls > out", [(">", "out", True)]),
        ("ls >> out 2>&1", [(">>", "out", True), (">&", "1", False)]),
        ("ls &> out", [("&>", "out", True)]),
        ("ls > /dev/null 2>/dev/stderr", [(">", "/dev/null", False), (">", "/dev/stderr", False)]),
        ("ls >| out", [(">|", "out", True)]),
        ("ls 2>&-", [(">&-", "", False)]),
        ("ls >& out", [(">&", "out", True)]),
        ("ls > $F", [(">", "$F", True)]),
        ("wc -l < in", [("<", "in", False)]),
    ],
)
def test_it_records_redirect_targets(command: str, redirects: list[tuple[str, str, bool]]) -> None:
    analysis = analyze(command)
    assert [(r.op, r.target, r.writes) for r in analysis.redirects] == redirects
    assert analysis.commands[0].redirects == analysis.redirects


def test_redirects_of_compound_statements_are_recorded() -> None:
    analysis = analyze("{ ls; pwd; } > out")
    assert [(r.op, r.target) for r in analysis.redirects] == [(">", "out")]
    assert names("{ ls; pwd; } > out") == ["ls", "pwd"]


def test_redirects_after_a_here_doc_belong_to_the_command() -> None:
    # tree-sitter-bash files them under the here-doc redirect.
    (command,) = analyze("cat <<EOF > /etc/x -n\nhello\nEOF\n").commands
    assert [(r.op, r.target, r.writes) for r in command.redirects] == [
        ("<<", "hello\n", False),
        (">", "/etc/x", True),
    ]
    assert command.argv == ("cat", "-n")


def test_words_after_a_redirect_belong_to_the_command() -> None:
    # tree-sitter-bash files `-rf /` under the redirect; bash gives them to rm.
    assert argvs("rm > /dev/null -rf /") == [("rm", "-rf", "/")]
    assert argvs("echo a >f b") == [("echo", "a", "b")]


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("sh <<'EOF'\nrm x\nEOF\n", ("rm", "x")),
        ("bash <<< 'rm y'", ("rm", "y")),
        ("echo `echo \\`rm z\\``", ("rm", "z")),
    ],
)
def test_it_parses_scripts_fed_to_a_shell(command: str, inner: tuple[str, ...]) -> None:
    analysis = analyze(command)
    assert not analysis.opaque
    assert inner in [c.argv for c in analysis.commands]


def test_commands_in_a_function_body_know_their_function() -> None:
    analysis = analyze(":(){ :|:& };:")
    assert [(c.name, c.function) for c in analysis.commands] == [(":", ":"), (":", ":"), (":", "")]


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("echo 'unterminated", "parse-error"),
        ("ls |", "parse-error"),
        ("{rm,-rf,/}", "parse-error"),
        ("if true; then", "parse-error"),
        ("$X -rf /", "dynamic-command"),
        ('"$(printf rm)" x', "dynamic-command"),
        ("/???/r? x", "dynamic-command"),
        ("`echo rm` x", "dynamic-command"),
        ('eval "$x"', "dynamic-script"),
        ('sh -c "$x"', "dynamic-script"),
        ("bash $OPTS", "dynamic-script"),
        ("curl x | sh", "stdin-program"),
        ("cat <<'EOF' | bash\nrm x\nEOF\n", "stdin-program"),
        ("bash -s", "stdin-program"),
        ("sudo -i", "stdin-program"),
        ("su - root", "stdin-program"),
        ('sh -c \'sh -c "sh -c \\"sh -c \\\\\\"sh -c ls\\\\\\"\\""\'', "too-deep"),
        ("x" * 40_000, "too-long"),
        ("ls\x00rm", "parse-error"),
    ],
)
def test_it_is_opaque_when_it_cannot_see_through(command: str, kind: str) -> None:
    analysis = analyze(command)
    assert analysis.opaque
    assert analysis.opaque_kind == kind
    assert analysis.reason


def test_a_parse_error_still_lists_the_commands_it_read() -> None:
    analysis = analyze("rm -rf / 'unterminated")
    assert analysis.opaque
    assert ("rm", "-rf", "/") in [c.argv[:3] for c in analysis.commands]


def test_its_canonical_text_puts_wrappers_first() -> None:
    (command,) = analyze("sudo   rm  'a b'").commands
    assert command.text == "sudo rm a b"


def test_analysis_is_the_same_from_many_threads() -> None:
    commands = [f"ls src{i} && rm -rf build{i} | tee out{i}" for i in range(200)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(analyze, commands))
    assert results == [analyze(c) for c in commands]


def test_an_empty_command_runs_nothing() -> None:
    analysis = analyze("   ")
    assert analysis.commands == ()
    assert not analysis.opaque


@pytest.mark.parametrize("command", ["{\U000e0000", "{𱡀", "echo {a} 🐛", "{ ls; }\n# \U0001f600"])
def test_it_never_hands_the_parser_text_that_crashes_it(command: str) -> None:
    # tree-sitter-bash 0.25.1 segfaults on `{` followed by a character outside the BMP
    # (tree-sitter/tree-sitter-bash#337); if this guard breaks, this test crashes.
    analysis = analyze(command)
    assert (analysis.opaque, analysis.opaque_kind) == (True, "parse-error")


def test_astral_characters_without_a_brace_are_parsed() -> None:
    assert argvs("git commit -m 'fix 🐛'") == [("git", "commit", "-m", "fix 🐛")]


def test_lone_surrogates_are_not_parsed() -> None:
    assert analyze("echo \ud800").opaque


@pytest.mark.parametrize(
    "command", ["env -C", "sudo -u", "timeout -s", "strace -o", "nice -n", "time -o", "flock"]
)
def test_a_wrapper_option_missing_its_value_is_analysed_not_a_crash(command: str) -> None:
    # These raised IndexError (the gate only turns ValueError/TypeError into a
    # decision), which would have ended the agent's unit instead of judging the call.
    assert argvs(command) == [tuple(command.split())]
