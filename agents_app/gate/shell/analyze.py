"""Static analysis of shell commands for the permission gate (DESIGN §5).

``analyze`` parses a command with tree-sitter-bash (a real shell grammar) and lists
every simple command that would run — across ``;``/``&&``/``||``, pipes, background
jobs, subshells, groups, control flow, function bodies, ``$(…)``, backticks, process
substitution and here-docs — and sees through wrappers (``env``, ``sudo``, ``timeout``,
``xargs``, ``find -exec``, ``sh -c``, literal ``eval`` …) so that each command can be
judged on its own. Whatever the analysis cannot see through (a parse error, a command
name known only at run time, ``eval "$x"``, a shell reading its program from a pipe)
makes the result *opaque*; the gate never allows an opaque command.

This module walks the syntax tree; ``emit`` turns each simple command's words into the
commands that run (``wrappers`` says what each wrapper runs), and ``words`` decodes
words the way bash would. Pure: no filesystem, no Django.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from agents_app.gate.shell.commands import (
    NAMES_ASSIGNED_AT_RUN_TIME,
    Redirect,
    ShellAnalysis,
    SimpleCommand,
    Word,
    make_command,
    with_upstream,
)
from agents_app.gate.shell.emit import Emitter, Findings
from agents_app.gate.shell.words import (
    assigned_name,
    has_backtick_substitution,
    node_text,
    node_word,
    redirect_writes,
)

# One parser for the process: building it loads the grammar, parsing reuses it. A
# TSParser is not thread-safe; py-tree-sitter 0.26 holds the GIL while it parses, and
# the lock keeps it safe should a later binding release it (it costs well under 1 µs).
_PARSER = Parser(Language(tree_sitter_bash.language()))
_PARSER_LOCK = threading.Lock()

MAX_LENGTH = 32_768  # longer commands are not analysed at all (opaque)
MAX_DEPTH = 64  # syntax-tree nesting
MAX_LOOP_VALUES = 16  # a for loop over more values leaves its variable unknown
_PROMPT_EXPANSION = re.compile(r"@P\}$")
_ASTRAL = re.compile("[\\U00010000-\\U0010FFFF]")


def analyze(command: str) -> ShellAnalysis:
    """List the simple commands inside ``command``; opaque when it cannot be seen through."""
    if len(command) > MAX_LENGTH:
        return ShellAnalysis(command, (), (), True, "too-long", "the command is too long")
    if "\x00" in command:
        return ShellAnalysis(command, (), (), True, "parse-error", "the command has a NUL byte")
    findings = _analyze_script(command, 0, "")
    kind, reason = findings.opaque or ("", "")
    commands, redirects = tuple(findings.commands), tuple(findings.redirects)
    return ShellAnalysis(command, commands, redirects, bool(kind), kind, reason)


def _analyze_script(source: str, level: int, function: str) -> Findings:
    """What one script runs; ``level`` counts the scripts it is nested in (sh -c …)."""
    emitter = Emitter(Findings(), level, function, nested=_analyze_script, source=source)
    SyntaxWalker(emitter).script(source)
    return emitter.findings


class SyntaxWalker:
    """Walks one script's syntax tree: each simple command goes to the ``Emitter``, each
    redirect and each reason the tree cannot be trusted to its ``Findings``."""

    def __init__(self, emitter: Emitter) -> None:
        self.emitter = emitter
        self.findings = emitter.findings

    def script(self, source: str) -> None:
        try:
            data = source.encode("utf-8")
        except UnicodeEncodeError:
            self.findings.fail("parse-error", "the command is not valid UTF-8 text")
            return
        brace = source.find("{")
        if brace >= 0 and _ASTRAL.search(source, brace):
            # tree-sitter-bash 0.25.1 can segfault on `{` followed later by a character
            # outside the BMP (tree-sitter/tree-sitter-bash#337, open); never parse it.
            self.findings.fail(
                "parse-error", "the command has characters the shell parser cannot read"
            )
            return
        self.parse(data)
        if b"\\\n" in data:
            self.parse_joined(data)

    def parse_joined(self, data: bytes) -> None:
        """Bash drops a backslash-newline even inside a word (`r\\⏎m` is rm); the grammar
        only between words. Both readings are judged: the second adds what it finds."""
        known, start = set(self.findings.commands), len(self.findings.commands)
        self.parse(data.replace(b"\\\n", b""))
        self.findings.commands[start:] = [
            c for c in self.findings.commands[start:] if c not in known
        ]

    def parse(self, data: bytes) -> None:
        with _PARSER_LOCK:
            root = _PARSER.parse(data).root_node
        if root.has_error:
            self.findings.fail("parse-error", "the shell parser could not read the whole command")
        self.visit(root, 0)

    def visit(self, node: Node, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.findings.fail("too-deep", "the command is nested too deeply to analyse")
            return
        handler = _NODE_HANDLERS.get(node.type)
        if handler is not None:
            handler(self, node, depth)
            return
        if node.type == "ERROR" or node.is_missing:
            self.findings.fail("parse-error", "the shell parser could not read the whole command")
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
                assignments.append(assigned_name(child))
            elif kind == "command_name":
                if not child.named_children:
                    self.findings.fail("parse-error", "a command has no name")
                    continue
                words.append(node_word(child.named_children[0]))
            elif kind.endswith("redirect"):
                own.extend(self.redirect(child, depth, words))
            else:
                words.append(node_word(child))
        self.visit_children(node, depth)
        self.findings.redirects.extend(own)
        # tree-sitter-bash files the words after a redirect (`rm >/dev/null -rf /`) under
        # the redirect; bash passes them to the command, so they are put back here.
        words.extend(extra)
        self.emitter.emit(words, tuple(assignments), (*redirects, *own), ())

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
        self.findings.redirects.extend(redirects)
        if body is not None and body.type == "command":
            self.command(body, depth + 1, tuple(redirects), tuple(extra))
        elif body is not None:
            if extra:
                self.findings.fail("parse-error", "words follow a redirect of a compound command")
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
        target = node_word(parts[0])
        extra.extend(node_word(c) for c in parts[1:])
        if kind == "herestring_redirect":
            return [Redirect("<<<", target.value, target.dynamic)]
        return [Redirect(op, target.value, target.dynamic, redirect_writes(op, parts[0], target))]

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
        quoted = start is not None and any(q in node_text(start) for q in "'\"\\")
        text = node_text(body) if body is not None else ""
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
        if _PROMPT_EXPANSION.search(node_text(node)):
            # ${x@P} expands the value as a prompt string: the $(…) in it run.
            self.findings.fail("dynamic-script", "${…@P} runs the commands its value holds")
        for child in node.named_children:
            self.visit(child, depth + 1)

    def check_backticks(self, node: Node) -> None:
        """The grammar leaves `…` inside ${…} and here-doc bodies as text; bash runs it."""
        if b"`" in (node.text or b"") and not has_backtick_substitution(node):
            self.findings.fail(
                "parse-error", "a backquoted command sits where the parser reads text"
            )

    def for_statement(self, node: Node, depth: int) -> None:
        """`for f in a *.py; do wc -l "$f"; done`: "$f" is each value in turn, when the
        values are static and nothing else in the command can assign the name."""
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        body = node.child_by_field_name("body")
        for value in values:
            self.visit(value, depth + 1)
        if body is None:
            return
        name = node_text(variable) if variable is not None else ""
        words = tuple(node_word(value) for value in values)
        source = self.emitter.source
        unused = re.sub(rf"\$(?:{name}\b|\{{{name}\}})", "", source) if name else ""
        bindable = (
            bool(name)
            and 0 < len(words) <= MAX_LOOP_VALUES
            and not any(w.dynamic for w in words)
            and len(re.findall(rf"\b{name}\b", unused)) == 1
            and not NAMES_ASSIGNED_AT_RUN_TIME.search(source)
        )
        saved = dict(self.emitter.bindings)
        if bindable:
            self.emitter.bindings[name] = words
        self.visit(body, depth + 1)
        self.emitter.bindings = saved

    def pipeline(self, node: Node, depth: int) -> None:
        """Each stage reads what the previous one writes: its commands are its upstream."""
        previous: tuple[SimpleCommand, ...] = ()
        for child in node.named_children:
            start = len(self.findings.commands)
            self.visit(child, depth + 1)
            emitted = self.findings.commands[start:]
            if previous:
                emitted = [with_upstream(c, previous) for c in emitted]
                self.findings.commands[start:] = emitted
            previous = tuple(emitted)

    def function_definition(self, node: Node, depth: int) -> None:
        name = node.child_by_field_name("name")
        saved, self.emitter.function = (
            self.emitter.function,
            node_text(name) if name is not None else "",
        )
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit(body, depth + 1)
        self.emitter.function = saved
        extra: list[Word] = []
        for child in node.named_children:
            if child.type.endswith("redirect"):  # `f() { …; } > file` writes when f runs
                self.findings.redirects.extend(self.redirect(child, depth, extra))

    def assignment(self, node: Node, depth: int) -> None:
        self.visit_children(node, depth)
        self.findings.add(
            make_command([], assignments=(assigned_name(node),), function=self.emitter.function)
        )

    def declaration(self, node: Node, depth: int) -> None:
        keyword = node_text(node.children[0]) if node.children else "declare"
        words = [Word(keyword)]
        names = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                names.append(assigned_name(child))
                value = child.child_by_field_name("value")
                word = node_word(value) if value is not None else Word("")
                words.append(Word(f"{names[-1]}={word.value}", word.dynamic, word.glob))
            else:
                words.append(node_word(child))
        self.visit_children(node, depth)
        self.findings.add(
            make_command(words, assignments=tuple(names), function=self.emitter.function)
        )

    def substitution(self, node: Node, depth: int) -> None:
        source = node_text(node)
        # Inside backticks, \` \$ \\ are unescaped before the inner script runs, so
        # `echo \`rm x\`` nests a second command substitution the tree does not show.
        if source.startswith("`") and "\\" in source:
            self.emitter.inner(re.sub(r"\\([`$\\])", r"\1", source[1:-1]), ())
            return
        for child in node.named_children:
            self.visit(child, depth + 1)


_NODE_HANDLERS: dict[str, Callable[[SyntaxWalker, Node, int], None]] = {
    "command": SyntaxWalker.command,
    "pipeline": SyntaxWalker.pipeline,
    "for_statement": SyntaxWalker.for_statement,
    "redirected_statement": SyntaxWalker.redirected,
    "function_definition": SyntaxWalker.function_definition,
    "variable_assignment": SyntaxWalker.assignment,
    "declaration_command": SyntaxWalker.declaration,
    "unset_command": SyntaxWalker.declaration,
    "command_substitution": SyntaxWalker.substitution,
    "expansion": SyntaxWalker.expansion,
}
