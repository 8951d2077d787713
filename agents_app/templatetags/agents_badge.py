"""``{% mode_badge session %}``: a session's badge as text chips (lists and tables)."""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents_app.badge import badge_for

register = template.Library()


@register.simple_tag
def mode_badge(session: object) -> SafeString:
    badge = badge_for(session)
    parts = format_html_join(
        " | ",
        '<span class="badge-part c-{}{}">{}</span>',
        ((part.colour, " pulse" if part.pulsing else "", part.value) for part in badge.parts),
    )
    paused = (
        format_html('<span class="badge-paused">{}</span>', "paused · ") if badge.paused else ""
    )
    classes = "badge inline" + (" paused" if badge.paused else "")
    return format_html(
        '<span class="{}" title="{}">{}{}</span>', classes, badge.full_text, paused, parts
    )
