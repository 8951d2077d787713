"""Plan text as people and models write it: `backticks` mark code."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_CODE = re.compile(r"`([^`\n]+)`")


@register.filter
def inline_code(text: object) -> SafeString:
    """``text`` escaped, with each `span` in backticks shown as code (and nothing else
    of Markdown: a plan is data from a model or a file, never trusted HTML)."""
    escaped = escape(str(text))
    return mark_safe(_CODE.sub(r"<code>\1</code>", escaped))  # escaped above
