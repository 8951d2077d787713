"""Shell words as bash reads them, decoded from tree-sitter-bash nodes.

Quotes, ``\\`` escapes and ANSI-C ``$'…'`` are decoded, so ``'r''m'``, ``r\\m`` and
``$'\\x72m'`` all read ``rm``; a word whose value is known only at run time (an
expansion, a brace list) is marked dynamic, and an unquoted ``*``/``?``/``[…]`` a glob.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from agents_app.gate.shell.commands import HARMLESS_TARGETS, Word

_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&", "&>|"})
_BRACE = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_GLOB_SHAPE = re.compile(r"[*?]|\[.*\]")
_ANSI = re.compile(
    r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.S
)
_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"}
_ANSI_SIMPLE |= {"r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")


def has_backtick_substitution(node: Node) -> bool:
    """Whether a backquoted command substitution sits somewhere under ``node``."""
    if node.type == "command_substitution" and (node.text or b"").startswith(b"`"):
        return True
    return any(has_backtick_substitution(child) for child in node.named_children)


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def assigned_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return node_text(name) if name is not None else node_text(node).split("=", 1)[0]


def node_word(node: Node) -> Word:
    """The word ``node`` stands for, decoded the way bash would read it."""
    kind = node.type
    text = node_text(node)
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
        parts = [node_word(child) for child in node.named_children]
        shape = "".join(node_text(c) if c.type == "word" else "Q" for c in node.named_children)
        dynamic = any(p.dynamic for p in parts) or bool(_BRACE.search(shape))
        glob = any(p.glob for p in parts) or bool(_GLOB_SHAPE.search(shape))
        return Word("".join(p.value for p in parts), dynamic, glob)
    if kind == "process_substitution" and text.startswith("<("):
        return Word(text, dynamic=True, stream=True)
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
            return Word(node_text(node), dynamic=True)
        parts.append(
            _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), node_text(child))
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


def redirect_writes(op: str, node: Node, target: Word) -> bool:
    """Whether a redirect opens a file for writing (not a descriptor, not /dev/null)."""
    if op not in _WRITE_OPS or node.type == "process_substitution":
        return False
    if op == ">&" and (target.value.isdigit() or target.value == "-"):
        return False  # 2>&1: a descriptor, not a file
    return target.dynamic or not (
        target.value in HARMLESS_TARGETS or target.value.startswith("/dev/fd/")
    )
