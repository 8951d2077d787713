"""A skill body as HTML, safely: a small Markdown subset over escaped text.

The project ships no Markdown or sanitising library, and a SKILL.md is written by
whoever can commit to the repository, so nothing in it may become markup of its own:
every line is escaped first and only the tags below are added (headings, fenced code,
lists, paragraphs, inline code, bold, italics). Links stay text.
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
CODE = re.compile(r"`([^`]+)`")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
ITALIC = re.compile(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])")


def markdown_html(text: str) -> SafeString:
    out: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    list_tag = ""
    fence: list[str] | None = None

    def flush() -> None:
        nonlocal list_tag
        if paragraph:
            out.append(f"<p>{_inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items:
            out.append(f"<{list_tag}>" + "".join(f"<li>{i}</li>" for i in items) + f"</{list_tag}>")
            items.clear()
            list_tag = ""

    for line in text.splitlines():
        if fence is not None:
            if line.strip().startswith("```"):
                out.append("<pre><code>" + escape("\n".join(fence)) + "</code></pre>")
                fence = None
            else:
                fence.append(line)
            continue
        if line.strip().startswith("```"):
            flush()
            fence = []
        elif not line.strip():
            flush()
        elif match := HEADING.match(line):
            flush()
            level = len(match.group(1)) + 2  # the page's own h1/h2 stay above it
            level = min(level, 6)
            out.append(f"<h{level}>{_inline(match.group(2))}</h{level}>")
        elif (match := BULLET.match(line)) or (match := NUMBERED.match(line)):
            tag = "ul" if BULLET.match(line) else "ol"
            if paragraph or (list_tag and list_tag != tag):
                flush()
            list_tag = tag
            items.append(_inline(match.group(1)))
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + _inline(line.strip())
        else:
            if items:
                flush()
            paragraph.append(line.strip())
    if fence is not None:
        out.append("<pre><code>" + escape("\n".join(fence)) + "</code></pre>")
    flush()
    return mark_safe("\n".join(out))  # every piece of text went through escape()


def _inline(text: str) -> str:
    """Escape, then mark up code spans (their contents kept as written), bold, italics."""
    parts = CODE.split(text)
    html = []
    for index, part in enumerate(parts):
        if index % 2:
            html.append(f"<code>{escape(part)}</code>")
        else:
            escaped = str(escape(part))
            escaped = BOLD.sub(r"<strong>\1</strong>", escaped)
            html.append(ITALIC.sub(r"<em>\1</em>", escaped))
    return "".join(html)
