"""Static analysis of shell commands for the permission gate (DESIGN §5).

``analyze`` parses a command with tree-sitter-bash (a real shell grammar) and lists
every simple command that would run — across ``;``/``&&``/``||``, pipes, background
jobs, subshells, groups, control flow, function bodies, ``$(…)``, backticks, process
substitution and here-docs — and sees through wrappers (``env``, ``sudo``, ``timeout``,
``xargs``, ``find -exec``, ``sh -c``, literal ``eval`` …) so that each command can be
judged on its own. Whatever the analysis cannot see through (a parse error, a command
name known only at run time, ``eval "$x"``, a shell reading its program from a pipe)
makes the result *opaque*; the gate never allows an opaque command.

Pure: no filesystem, no Django. Words are decoded the way bash would (quotes, ``\\``
escapes, ANSI-C ``$'…'``), so ``'r''m'``, ``r\\m`` and ``$'\\x72m'`` all read ``rm``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

# One parser for the process: building it loads the grammar, parsing reuses it. A
# TSParser is not thread-safe; py-tree-sitter 0.26 holds the GIL while it parses, and
# the lock keeps it safe should a later binding release it (it costs well under 1 µs).
_PARSER = Parser(Language(tree_sitter_bash.language()))
_PARSER_LOCK = threading.Lock()

MAX_LENGTH = 32_768  # longer commands are not analysed at all (opaque)
MAX_DEPTH = 64  # syntax-tree nesting
MAX_LEVEL = 4  # nested scripts: sh -c 'sh -c …', eval, backticks in backticks

# Wrappers that run their command with more privilege than the agent has.
PRIVILEGED_WRAPPERS = frozenset({"sudo", "doas", "su", "runuser", "pkexec", "chroot", "nsenter"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "busybox-sh"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_ASTRAL = re.compile("[\\U00010000-\\U0010FFFF]")
# Bash's reserved words: never a command name in a tree that reads the script right.
_RESERVED = frozenset(
    str.split("{ } ( ) if then else elif fi do done case esac while until for select function")
) | {"in", "[[", "]]", "!"}
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&", "&>|"})


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: its decoded value, or its source text when not static."""

    value: str
    dynamic: bool = False  # parameter, command, arithmetic or brace expansion
    glob: bool = False  # unquoted * ? [ (pathname expansion)


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str  # >, >>, &>, <, <<, <<<, …
    target: str  # file as written (decoded); here-doc/here-string: the text fed to stdin
    dynamic: bool = False
    writes: bool = False  # opens a file for writing (not a fd dup, not /dev/null)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command that would run, after wrappers were peeled off."""

    name: str  # basename of argv[0] ("" when unknown until run time, or none)
    words: tuple[Word, ...]
    argv: tuple[str, ...]
    text: str  # canonical form for rules: the wrappers (via) then argv
    dynamic: bool  # some word, or some argument appended at run time, is not static
    assignments: tuple[str, ...] = ()  # names of VAR=value prefixes (or a bare assignment)
    redirects: tuple[Redirect, ...] = ()
    via: tuple[str, ...] = ()  # wrappers peeled to reach it, outermost first
    function: str = ""  # the function whose body holds it
    stdin_args: bool = False  # xargs / find -exec add arguments at run time

    @property
    def program(self) -> str:
        """argv[0] as written, e.g. ``/bin/rm`` or ``./rm``."""
        return self.argv[0] if self.argv else ""

    @property
    def args(self) -> tuple[str, ...]:
        return self.argv[1:]

    @property
    def flags(self) -> tuple[str, ...]:
        """Arguments that look like options, up to ``--``."""
        found: list[str] = []
        for arg in self.argv[1:]:
            if arg == "--":
                break
            if arg.startswith("-") and arg != "-":
                found.append(arg)
        return tuple(found)


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    source: str
    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]  # every redirect, also those of { …; } > f
    opaque: bool = False
    opaque_kind: str = ""  # parse-error, dynamic-command, dynamic-script, stdin-program, …
    reason: str = ""


def analyze(command: str) -> ShellAnalysis:
    """List the simple commands inside ``command``; opaque when it cannot be seen through."""
    if len(command) > MAX_LENGTH:
        return ShellAnalysis(command, (), (), True, "too-long", "the command is too long")
    if "\x00" in command:
        return ShellAnalysis(command, (), (), True, "parse-error", "the command has a NUL byte")
    walker = _Walker(level=0)
    walker.script(command)
    kind, reason = walker.opaque or ("", "")
    commands, redirects = tuple(walker.commands), tuple(walker.redirects)
    return ShellAnalysis(command, commands, redirects, bool(kind), kind, reason)


def make_command(
    words: list[Word] | tuple[Word, ...],
    *,
    assignments: tuple[str, ...] = (),
    redirects: tuple[Redirect, ...] = (),
    via: tuple[str, ...] = (),
    function: str = "",
    stdin_args: bool = False,
) -> SimpleCommand:
    """A SimpleCommand with its derived fields (name, argv, text, dynamic) filled in."""
    argv = tuple(word.value for word in words)
    first = words[0] if words else None
    name = "" if first is None or first.dynamic or first.glob else first.value.rsplit("/", 1)[-1]
    dynamic = stdin_args or any(w.dynamic or w.glob for w in words)
    text = " ".join((*via, *argv))
    return SimpleCommand(
        name, tuple(words), argv, text, dynamic, assignments, redirects, via, function, stdin_args
    )


def _copy(
    command: SimpleCommand, words: tuple[Word, ...] | None = None, via: tuple[str, ...] = ()
) -> SimpleCommand:
    """The same command with other words and/or more wrappers in front."""
    return make_command(
        command.words if words is None else words,
        assignments=command.assignments,
        redirects=command.redirects,
        via=(*via, *command.via),
        function=command.function,
        stdin_args=command.stdin_args,
    )


class _Walker:
    """Walks one script's syntax tree, collecting commands and redirects."""

    def __init__(self, level: int, function: str = "") -> None:
        self.level = level
        self.function = function
        self.commands: list[SimpleCommand] = []
        self.redirects: list[Redirect] = []
        self.opaque: tuple[str, str] | None = None

    def fail(self, kind: str, reason: str) -> None:
        # The first reason is kept: it is the one a person can act on.
        if self.opaque is None:
            self.opaque = (kind, reason)

    def script(self, source: str) -> None:
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError:
            self.fail("parse-error", "the command is not valid UTF-8 text")
            return
        brace = source.find("{")
        if brace >= 0 and _ASTRAL.search(source, brace):
            # tree-sitter-bash 0.25.1 can segfault on `{` followed later by a character
            # outside the BMP (tree-sitter/tree-sitter-bash#337, open); never parse it.
            self.fail("parse-error", "the command has characters the shell parser cannot read")
            return
        self.parse(data)
        if b"\\\n" in data:
            self.parse_joined(data)

    def parse_joined(self, data: bytes) -> None:
        """Bash drops a backslash-newline even inside a word (`r\\⏎m` is rm); the grammar
        only between words. Both readings are judged: the second adds what it finds."""
        known, start = set(self.commands), len(self.commands)
        self.parse(data.replace(b"\\\n", b""))
        self.commands[start:] = [c for c in self.commands[start:] if c not in known]

    def parse(self, data: bytes) -> None:
        with _PARSER_LOCK:
            root = _PARSER.parse(data).root_node
        if root.has_error:
            self.fail("parse-error", "the shell parser could not read the whole command")
        self.visit(root, 0)

    def inner(self, source: str, via: tuple[str, ...]) -> None:
        """Analyse a script run by another command (sh -c, eval, backticks)."""
        if self.level >= MAX_LEVEL:
            self.fail("too-deep", "scripts are nested too deeply to analyse")
            return
        nested = _Walker(self.level + 1, self.function)
        nested.script(source)
        for command in nested.commands:
            self.add(_copy(command, via=via))
        self.redirects.extend(nested.redirects)
        if nested.opaque:
            self.fail(*nested.opaque)

    def add(self, command: SimpleCommand) -> None:
        self.commands.append(command)

    def visit(self, node: Node, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.fail("too-deep", "the command is nested too deeply to analyse")
            return
        handler = _HANDLERS.get(node.type)
        if handler is not None:
            handler(self, node, depth)
            return
        if node.type == "ERROR" or node.is_missing:
            self.fail("parse-error", "the shell parser could not read the whole command")
        for child in node.named_children:
            self.visit(child, depth + 1)

    def visit_children(self, node: Node, depth: int) -> None:
        """Visit what may hold commands, skipping redirects (``redirect`` visits those)."""
        for child in node.named_children:
            if child.type.endswith("redirect"):
                continue
            if child.type == "variable_assignment":
                self.visit_children(child, depth + 1)  # its value may hold $(…)
            else:
                self.visit(child, depth + 1)

    # -- statements ---------------------------------------------------------------

    def command(
        self,
        node: Node,
        depth: int,
        redirects: tuple[Redirect, ...] = (),
        extra: tuple[Word, ...] = (),
    ) -> None:
        words: list[Word] = []
        assignments: list[str] = []
        own: list[Redirect] = []
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                assignments.append(_assigned_name(child))
            elif kind == "command_name":
                if not child.named_children:
                    self.fail("parse-error", "a command has no name")
                    continue
                words.append(_word(child.named_children[0]))
            elif kind.endswith("redirect"):
                own.extend(self.redirect(child, depth, words))
            else:
                words.append(_word(child))
        self.visit_children(node, depth)
        self.redirects.extend(own)
        # tree-sitter-bash files the words after a redirect (`rm >/dev/null -rf /`) under
        # the redirect; bash passes them to the command, so they are put back here.
        words.extend(extra)
        self.emit(words, tuple(assignments), (*redirects, *own), ())

    def redirected(self, node: Node, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        extra: list[Word] = []
        for child in node.named_children:
            if body is not None and child.id == body.id:
                continue
            if child.type.endswith("redirect"):
                redirects.extend(self.redirect(child, depth, extra))
            else:
                self.visit(child, depth + 1)
        self.redirects.extend(redirects)
        if body is not None and body.type == "command":
            self.command(body, depth + 1, tuple(redirects), tuple(extra))
        elif body is not None:
            if extra:
                self.fail("parse-error", "words follow a redirect of a compound command")
            self.visit(body, depth + 1)

    def redirect(self, node: Node, depth: int, extra: list[Word]) -> list[Redirect]:
        """The redirects in ``node``; words that follow them go to ``extra``."""
        kind = node.type
        if kind == "heredoc_redirect":
            return self.heredoc(node, depth, extra)
        parts = [c for c in node.named_children if c.type != "file_descriptor"]
        for child in parts:
            self.visit(child, depth + 1)
        op = next((c.type for c in node.children if not c.is_named), "")
        if not parts:
            return [Redirect(op, "")]
        target = _word(parts[0])
        extra.extend(_word(c) for c in parts[1:])
        if kind == "herestring_redirect":
            return [Redirect("<<<", target.value, target.dynamic)]
        return [Redirect(op, target.value, target.dynamic, _writes(op, parts[0], target))]

    def heredoc(self, node: Node, depth: int, extra: list[Word]) -> list[Redirect]:
        start = body = None
        nested: list[Redirect] = []
        for child in node.named_children:
            if child.type == "heredoc_start":
                start = child
            elif child.type == "heredoc_body":
                body = child
            elif child.type.endswith("redirect"):
                # `cat <<EOF > /etc/x`: the grammar files the command's next redirects here.
                nested += self.redirect(child, depth, extra)
            elif child.type != "heredoc_end":
                self.visit(child, depth + 1)  # `cat <<EOF | sh` puts the pipe in here
        quoted = start is not None and any(q in _text(start) for q in "'\"\\")
        text = _text(body) if body is not None else ""
        dynamic = False
        if body is not None and not quoted:
            self.check_backticks(body)
            for child in body.named_children:
                if child.type != "heredoc_content":
                    dynamic = True
                    self.visit(child, depth + 1)
        return [Redirect("<<", text, dynamic), *nested]

    def expansion(self, node: Node, depth: int) -> None:
        self.check_backticks(node)
        for child in node.named_children:
            self.visit(child, depth + 1)

    def check_backticks(self, node: Node) -> None:
        """The grammar leaves `…` inside ${…} and here-doc bodies as text; bash runs it."""
        if b"`" in (node.text or b"") and not _has_backtick_substitution(node):
            self.fail("parse-error", "a backquoted command sits where the parser reads text")

    def function_definition(self, node: Node, depth: int) -> None:
        name = node.child_by_field_name("name")
        saved, self.function = self.function, _text(name) if name is not None else ""
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body, depth + 1)
        self.function = saved
        extra: list[Word] = []
        for child in node.named_children:
            if child.type.endswith("redirect"):  # `f() { …; } > file` writes when f runs
                self.redirects.extend(self.redirect(child, depth, extra))

    def assignment(self, node: Node, depth: int) -> None:
        self.visit_children(node, depth)
        self.add(make_command([], assignments=(_assigned_name(node),), function=self.function))

    def declaration(self, node: Node, depth: int) -> None:
        keyword = _text(node.children[0]) if node.children else "declare"
        words = [Word(keyword)]
        names = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                names.append(_assigned_name(child))
                value = child.child_by_field_name("value")
                word = _word(value) if value is not None else Word("")
                words.append(Word(f"{names[-1]}={word.value}", word.dynamic, word.glob))
            else:
                words.append(_word(child))
        self.visit_children(node, depth)
        self.add(make_command(words, assignments=tuple(names), function=self.function))

    def substitution(self, node: Node, depth: int) -> None:
        source = _text(node)
        # Inside backticks, \` \$ \\ are unescaped before the inner script runs, so
        # `echo \`rm x\`` nests a second command substitution the tree does not show.
        if source.startswith("`") and "\\" in source:
            self.inner(re.sub(r"\\([`$\\])", r"\1", source[1:-1]), ())
            return
        for child in node.named_children:
            self.visit(child, depth + 1)

    # -- wrappers -------------------------------------------------------------------

    def emit(
        self,
        words: list[Word],
        assignments: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        via: tuple[str, ...],
        stdin_args: bool = False,
    ) -> None:
        if words and (words[0].dynamic or words[0].glob):
            self.fail(
                "dynamic-command", f"the command name {words[0].value!r} is known only at run time"
            )
        elif words and words[0].value in _RESERVED:
            # `time { rm x; }`: the grammar reads `time` as a command and `{` as its
            # argument, so the tree no longer says what runs.
            self.fail(
                "parse-error", f"the keyword {words[0].value!r} stands where a command should"
            )
        command = make_command(
            words,
            assignments=assignments,
            redirects=redirects,
            via=via,
            function=self.function,
            stdin_args=stdin_args,
        )
        unwrap = _UNWRAP.get(command.name)
        if unwrap is None or len(via) > 8:
            self.add(command)
            return
        unwrap(self, command)

    def rewrap(
        self,
        command: SimpleCommand,
        rest: tuple[Word, ...],
        label: str,
        assignments: tuple[str, ...] = (),
        stdin_args: bool = False,
        chdir: Word | None = None,
        output: Word | None = None,
    ) -> None:
        """Emit the command a wrapper runs, or the wrapper itself when it runs none.

        ``chdir``: the wrapper runs it in that directory (``env -C``), recorded as a
        ``cd`` before it; ``output``: a file the wrapper writes (``strace -o``).
        """
        if not rest:
            self.add(command)
            return
        via = (*command.via, label)
        if chdir is not None:
            self.add(make_command([Word("cd"), chdir], via=via, function=self.function))
        redirects = command.redirects
        if output is not None:
            written = Redirect(">", output.value, output.dynamic, writes=True)
            self.redirects.append(written)
            redirects = (*redirects, written)
        self.emit(list(rest), assignments, redirects, via, stdin_args or command.stdin_args)

    def script_text(self, command: SimpleCommand, words: tuple[Word, ...], label: str) -> None:
        if any(w.dynamic or w.glob for w in words):
            self.add(command)
            self.fail("dynamic-script", f"{label} runs a script known only at run time")
            return
        self.inner(" ".join(w.value for w in words), (*command.via, label))


# -- words --------------------------------------------------------------------------

_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_SHAPE = re.compile(r"[*?]|\[.*\]")
_ANSI = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"}
_ANSI_SIMPLE |= {"r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")


def _has_backtick_substitution(node: Node) -> bool:
    if node.type == "command_substitution" and (node.text or b"").startswith(b"`"):
        return True
    return any(_has_backtick_substitution(child) for child in node.named_children)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _assigned_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return _text(name) if name is not None else _text(node).split("=", 1)[0]


def _word(node: Node) -> Word:
    kind = node.type
    text = _text(node)
    if kind == "word":
        return _bare(text)
    if kind == "number":
        return Word(text)
    if kind == "raw_string":
        return Word(text[1:-1])
    if kind == "ansi_c_string":
        return Word(_ANSI.sub(_ansi_escape, text[2:-1]))
    if kind in ("string", "translated_string"):
        return _double_quoted(node)
    if kind == "concatenation":
        parts = [_word(child) for child in node.named_children]
        shape = "".join(_text(c) if c.type == "word" else "Q" for c in node.named_children)
        dynamic = any(p.dynamic for p in parts) or bool(_BRACE.search(shape))
        glob = any(p.glob for p in parts) or bool(_GLOB_SHAPE.search(shape))
        return Word("".join(p.value for p in parts), dynamic, glob)
    return Word(text, dynamic=True)


def _bare(text: str) -> Word:
    if not any(c in text for c in "\\*?[{"):
        return Word(text)
    out: list[str] = []
    glob = bracket = False
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            if index + 1 < len(text) and text[index + 1] != "\n":
                out.append(text[index + 1])
            index += 2
            continue
        glob = glob or char in "*?" or (char == "]" and bracket)
        bracket = bracket or char == "["
        out.append(char)
        index += 1
    return Word("".join(out), bool(_BRACE.search(text)), glob)


def _double_quoted(node: Node) -> Word:
    parts: list[str] = []
    for child in node.named_children:
        if child.type == "string":  # $"…" wraps a string
            return _double_quoted(child)
        if child.type != "string_content":
            return Word(_text(node), dynamic=True)
        parts.append(
            _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), _text(child))
        )
    return Word("".join(parts))


def _ansi_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    head = code[0]
    if head in "xuU" and len(code) > 1:
        return chr(min(int(code[1:], 16), 0x10FFFF))
    if head.isdigit():
        return chr(int(code, 8) & 0xFF)
    if head == "c" and len(code) == 2:
        return chr(ord(code[1]) & 0x1F)
    return _ANSI_SIMPLE.get(code, "\\" + code)  # bash keeps unknown escapes as written


def _writes(op: str, node: Node, target: Word) -> bool:
    if op not in _WRITE_OPS or node.type == "process_substitution":
        return False
    if op == ">&" and (target.value.isdigit() or target.value == "-"):
        return False  # 2>&1: a descriptor, not a file
    return target.dynamic or not (
        target.value in HARMLESS_TARGETS or target.value.startswith("/dev/fd/")
    )


# -- wrappers -------------------------------------------------------------------------

_Unwrap = Callable[["_Walker", SimpleCommand], None]


def _after_options(
    words: tuple[Word, ...], start: int, short: str = "", long: frozenset[str] = frozenset()
) -> int:
    """Index of the first operand after a wrapper's own options.

    ``short`` lists option letters that take a value (``-u root`` or ``-uroot``);
    ``long`` lists long options that take one when not written ``--opt=value``.
    """
    index = start
    while index < len(words):
        value = words[index].value
        if value == "--":
            return index + 1
        if not value.startswith("-") or value == "-":
            return index
        if value.startswith("--"):
            index += 2 if value in long else 1
            continue
        index += 1
        for position, letter in enumerate(value[1:], start=1):
            if letter in short:
                index += 1 if position == len(value) - 1 else 0
                break
    return index


def _prefix(
    short: str = "",
    long: tuple[str, ...] = (),
    operands: int = 0,
    chdir: tuple[str, str] = ("", ""),
    output: tuple[str, str] = ("", ""),
) -> _Unwrap:
    """A wrapper of the form ``wrapper [options] [N operands] command [args]``.

    ``chdir``/``output`` name its options (short, long) that set the directory the
    command runs in, or a file the wrapper writes.
    """
    long_set = frozenset(long)

    def unwrap(walker: _Walker, command: SimpleCommand) -> None:
        words = command.words
        end = _after_options(words, 1, short, long_set)
        walker.rewrap(
            command,
            words[end + operands :],
            command.name,
            chdir=_option_word(words, end, *chdir),
            output=_option_word(words, end, *output),
        )

    return unwrap


def _option_word(words: tuple[Word, ...], end: int, short: str, long: str) -> Word | None:
    """The value of a wrapper's own option (among ``words[1:end]``)."""
    for index in range(1, end):
        value = words[index].value
        if value and value in (short, long) and index + 1 < len(words):
            return words[index + 1]
        if long and value.startswith(long + "="):
            return Word(value.split("=", 1)[1], words[index].dynamic)
        if short and value.startswith(short) and len(value) > 2 and value[1] != "-":
            return Word(value[2:], words[index].dynamic)
    return None


def _sudo(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    start = _after_options(words, 1, "ugCDprtTUR", frozenset({"--user", "--group", "--chdir"}))
    options = {w.value for w in words[1:start]}
    if options & {"-e", "--edit"}:
        walker.add(_copy(command, (Word("sudoedit"), *words[start:])))
    elif options & {"-s", "-i", "--shell", "--login"}:
        if start >= len(words):
            walker.add(command)
            walker.fail("stdin-program", f"{command.name} opens an interactive shell")
        else:
            walker.script_text(command, words[start:], command.name)
    else:
        chdir = _option_word(words, start, "-D", "--chdir")
        walker.rewrap(command, words[start:], command.name, chdir=chdir)


def _env(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    start = _after_options(words, 1, "uCSP", frozenset({"--unset", "--chdir", "--split-string"}))
    for index, word in enumerate(words[1:start], start=1):
        split = _split_string(word.value, words[index + 1 : index + 2])
        if split is not None:
            walker.script_text(command, (*split, *words[start:]), "env -S")
            return
    assignments = list(command.assignments)
    while start < len(words) and _ASSIGNMENT.match(words[start].value):
        assignments.append(words[start].value.split("=", 1)[0])
        start += 1
    chdir = _option_word(words, start, "-C", "--chdir")
    walker.rewrap(command, words[start:], "env", assignments=tuple(assignments), chdir=chdir)


def _split_string(option: str, following: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The words of ``env -S STRING`` (a second command line), if this option is -S."""
    if option in ("-S", "--split-string"):
        return following
    if option.startswith("--split-string="):
        return (Word(option.split("=", 1)[1]),)
    if option.startswith("-S"):
        return (Word(option[2:]),)
    return None


def _command_builtin(walker: _Walker, command: SimpleCommand) -> None:
    start = _after_options(command.words, 1)
    if {"-v", "-V"} & {w.value for w in command.words[1:start]}:
        walker.add(command)  # `command -v x` only looks a name up
        return
    walker.rewrap(command, command.words[start:], "command")


def _xargs(walker: _Walker, command: SimpleCommand) -> None:
    long = frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars"})
    start = _after_options(command.words, 1, "aEdILnPs", long)
    rest = command.words[start:] or (Word("echo"),)
    walker.rewrap(command, rest, "xargs", stdin_args=True)


def _find(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    kept: list[Word] = []
    actions: list[tuple[str, tuple[Word, ...]]] = []
    index = 0
    while index < len(words):
        value = words[index].value
        if value in _FIND_EXEC:
            end = index + 1
            while end < len(words) and words[end].value not in (";", "+"):
                end += 1
            actions.append((value, words[index + 1 : end]))
            index = end + 1
            continue
        kept.append(words[index])
        index += 1
    walker.add(_copy(command, tuple(kept)))
    roots = find_roots(tuple(kept))
    # Each {} is a path at or below a root; with -L/-follow it may be anywhere.
    follows = any(w.value in ("-L", "-follow") for w in kept)
    for action, inner in actions:
        if inner:
            found = _substitute(inner, roots)
            via = (*command.via, f"find {action}")
            walker.emit(list(found), (), (), via, follows)


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_roots(words: tuple[Word, ...]) -> tuple[Word, ...]:
    """The starting points of ``find`` (the operands before its expression)."""
    roots: list[Word] = []
    for word in words[1:]:
        if word.value.startswith(("-", "(", "!", ")")) and word.value not in (
            "-",
            "-L",
            "-H",
            "-P",
        ):
            break
        if word.value not in ("-L", "-H", "-P"):
            roots.append(word)
    return tuple(roots) or (Word("."),)


def _substitute(words: tuple[Word, ...], roots: tuple[Word, ...]) -> tuple[Word, ...]:
    """Replace ``{}`` by the roots; any other use of ``{}`` is only known at run time."""
    out: list[Word] = []
    for word in words:
        if word.value == "{}":
            out.extend(roots)
        elif "{}" in word.value:
            out.append(Word(word.value, dynamic=True))
        else:
            out.append(word)
    return tuple(out) if out != list(words) else words


def _shell(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    index, inline, from_stdin = 1, False, False
    while index < len(words) and not words[index].dynamic:
        value = words[index].value
        if value in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if value in ("--", "-"):
            from_stdin = from_stdin or value == "-"
            index += 1
            break
        if not value.startswith(("-", "+")) or value == "+":
            break
        if value[0] == "-" and not value.startswith("--"):
            inline = inline or "c" in value
            from_stdin = from_stdin or "s" in value or "i" in value
        index += 1
    if index < len(words) and words[index].dynamic:
        walker.add(command)
        walker.fail("dynamic-script", f"{command.name} runs a script known only at run time")
    elif inline:
        walker.script_text(command, words[index : index + 1], f"{command.name} -c")
    elif index < len(words) and not from_stdin:
        walker.add(command)  # runs a script file; the catalog judges it
    else:
        _shell_stdin(walker, command)


def _shell_stdin(walker: _Walker, command: SimpleCommand) -> None:
    fed = [r for r in command.redirects if r.op in ("<<", "<<<")]
    if fed and not fed[-1].dynamic:
        walker.inner(fed[-1].target, (*command.via, f"{command.name} <<"))
        return
    walker.add(command)
    walker.fail("stdin-program", f"{command.name} reads its program from standard input")


def _su(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    for index, word in enumerate(words):
        if word.value in ("-c", "--command") and index + 1 < len(words):
            walker.script_text(command, words[index + 1 : index + 2], command.name)
            return
    if command.name == "runuser" and "-u" in command.argv:
        walker.rewrap(command, words[_after_options(words, 1, "ugG") :], "runuser")
        return
    walker.add(command)
    walker.fail("stdin-program", f"{command.name} opens an interactive shell")


def _eval(walker: _Walker, command: SimpleCommand) -> None:
    walker.script_text(command, command.words[1:], "eval")


def _trap(walker: _Walker, command: SimpleCommand) -> None:
    """`trap ACTION SIGNAL…`: the action is a script run later."""
    found = [w for w in command.words[1:] if w.value not in ("-p", "-l", "--")]
    if len(found) < 2 or found[0].value == "-":
        walker.add(command)
        return
    walker.script_text(command, tuple(found[:1]), "trap")


def _alias(walker: _Walker, command: SimpleCommand) -> None:
    """`alias name=value`: the value runs wherever the name is used."""
    walker.add(command)
    for word in command.words[1:]:
        if "=" in word.value:
            value = word.value.split("=", 1)[1]
            walker.script_text(command, (Word(value, word.dynamic, word.glob),), "alias")


def _watch(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    start = _after_options(words, 1, "nq", frozenset({"--interval"}))
    if {"-x", "--exec"} & {w.value for w in words[1:start]}:
        walker.rewrap(command, words[start:], "watch")
    elif start < len(words):
        walker.script_text(command, words[start:], "watch")
    else:
        walker.add(command)


def _busybox(walker: _Walker, command: SimpleCommand) -> None:
    walker.rewrap(command, command.words[1:], "busybox")


def _flock(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    start = _after_options(words, 1, "wEc", frozenset({"--timeout", "--conflict-exit-code"}))
    for index, word in enumerate(words[1:start], start=1):
        if word.value in ("-c", "--command"):
            walker.script_text(command, words[index + 1 : index + 2], "flock -c")
            return
    lock = words[start] if start < len(words) else None  # created if missing
    walker.rewrap(command, words[start + 1 :], "flock", output=lock)


def _runner(subcommand: str, short: str = "", long: tuple[str, ...] = ()) -> _Unwrap:
    """``tool SUBCOMMAND [options] command`` (uv run, poetry run, …): judge the command."""
    long_set = frozenset(long)

    def unwrap(walker: _Walker, command: SimpleCommand) -> None:
        words = command.words
        if len(words) < 2 or words[1].value != subcommand:
            walker.add(command)
            return
        start = _after_options(words, 2, short, long_set)
        walker.rewrap(command, words[start:], f"{command.name} {subcommand}")

    return unwrap


_UV_RUN_VALUES: tuple[str, ...] = (
    "--with",
    "--python",
    "--directory",
    "--project",
    "--extra",
    "--group",
)
_UV_RUN_VALUES += ("--env-file", "--package", "--index", "--with-requirements")


def _npx(walker: _Walker, command: SimpleCommand) -> None:
    words = command.words
    start = _after_options(words, 1, "pc", frozenset({"--package", "--call"}))
    for index, word in enumerate(words[1:start], start=1):
        if word.value in ("-c", "--call"):  # runs a shell command line
            walker.script_text(command, words[index + 1 : index + 2], "npx -c")
            return
    walker.rewrap(command, words[start:], "npx")


_UNWRAP: dict[str, _Unwrap] = {
    "sudo": _sudo,
    "doas": _prefix("uC"),
    "env": _env,
    "nohup": _prefix(),
    "time": _prefix("fo", ("--output", "--format"), output=("-o", "--output")),
    "command": _command_builtin,
    "builtin": _prefix(),
    "exec": _prefix("a"),
    "nice": _prefix("n", ("--adjustment",)),
    "ionice": _prefix("cnpt", ("--class", "--classdata")),
    "timeout": _prefix("sk", ("--signal", "--kill-after"), operands=1),
    "stdbuf": _prefix("ioe", ("--input", "--output", "--error")),
    "setsid": _prefix(),
    "chronic": _prefix(),
    "unbuffer": _prefix(),
    "coproc": _prefix(),
    "torsocks": _prefix(),
    "proxychains": _prefix("f"),
    "proxychains4": _prefix("f"),
    "strace": _prefix("eoEpPsSuUXIa", output=("-o", "--output")),
    "ltrace": _prefix("eoEpPsSuUXIa", output=("-o", "--output")),
    "caffeinate": _prefix("tw"),
    "chroot": _prefix("", ("--userspec", "--groups"), operands=1),
    "taskset": _prefix("", (), operands=1),
    "nsenter": _prefix("tSGnmuipUCrwFZ"),
    "unshare": _prefix(),
    "pkexec": _prefix("", ("--user",)),
    "xargs": _xargs,
    "find": _find,
    "su": _su,
    "runuser": _su,
    "eval": _eval,
    "trap": _trap,
    "alias": _alias,
    "watch": _watch,
    "busybox": _busybox,
    "flock": _flock,
    "uv": _runner("run", "p", _UV_RUN_VALUES),
    "poetry": _runner("run", "C", ("--directory", "--project")),
    "pipenv": _runner("run"),
    "pdm": _runner("run", "p", ("--project",)),
    "hatch": _runner("run"),
    "conda": _runner("run", "np", ("--name", "--prefix", "--cwd")),
    # These may download a package and run it; the catalog judges what they run.
    "npx": _npx,
    "pnpx": _prefix(),
    "bunx": _prefix("p", ("--package",)),
    "uvx": _prefix("p", ("--from", "--with", "--python")),
    **dict.fromkeys(SHELLS, _shell),
}

_HANDLERS: dict[str, Callable[[_Walker, Node, int], None]] = {
    "command": _Walker.command,
    "redirected_statement": _Walker.redirected,
    "function_definition": _Walker.function_definition,
    "variable_assignment": _Walker.assignment,
    "declaration_command": _Walker.declaration,
    "unset_command": _Walker.declaration,
    "command_substitution": _Walker.substitution,
    "expansion": _Walker.expansion,
}
