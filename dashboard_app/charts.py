"""Charts as server-rendered SVG: no script, no library. Each chart has a title and a
description for screen readers, and the page prints the same figures beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT, PAD = 640, 180, 24


@dataclass(frozen=True)
class Bar:
    label: str  # the period, e.g. 2026-11-23
    parts: tuple[float, ...]  # stacked values, in the order of the chart's series


def bar_chart(
    title: str, series: Sequence[tuple[str, str]], bars: Sequence[Bar], unit: str = ""
) -> SafeString:
    """Stacked bars, one per period; ``series`` is (name, css colour) of each part."""
    top = max((sum(bar.parts) for bar in bars), default=0) or 1
    slot = (WIDTH - 2 * PAD) / max(len(bars), 1)
    shapes: list[SafeString] = []
    for index, bar in enumerate(bars):
        x, base = PAD + index * slot, float(HEIGHT - PAD)
        for (name, colour), value in zip(series, bar.parts, strict=True):
            height = value / top * (HEIGHT - 2 * PAD)
            base -= height
            shapes.append(
                format_html(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}">'
                    "<title>{}: {} {}{}</title></rect>",
                    f"{x + 1:.1f}",
                    f"{base:.1f}",
                    f"{max(slot - 2, 1):.1f}",
                    f"{height:.1f}",
                    colour,
                    bar.label,
                    name,
                    f"{value:g}",
                    unit,
                )
            )
    labels = _axis_labels(bars, slot)
    legend = format_html_join(
        " ", '<tspan fill="{}">■</tspan> {}', ((colour, name) for name, colour in series)
    )
    described = ", ".join(
        f"{bar.label}: "
        + ", ".join(f"{n} {v:g}{unit}" for (n, _), v in zip(series, bar.parts, strict=True))
        for bar in bars
    )
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">'
        "<title>{}</title><desc>{}</desc>"
        '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="currentColor" stroke-width="0.5"/>'
        "{}{}"
        '<text x="{}" y="14" font-size="11">{}</text></svg>',
        WIDTH,
        HEIGHT,
        title,
        title,
        described or "no data",
        PAD,
        HEIGHT - PAD,
        WIDTH - PAD,
        HEIGHT - PAD,
        mark_safe("".join(shapes)),
        labels,
        PAD,
        legend,
    )


def _axis_labels(bars: Sequence[Bar], slot: float) -> SafeString:
    """At most about eight labels under the bars, so they never overlap."""
    every = max(1, len(bars) // 8 + (1 if len(bars) % 8 else 0))
    return format_html_join(
        "",
        '<text x="{}" y="{}" font-size="9" text-anchor="middle">{}</text>',
        (
            (f"{PAD + index * slot + slot / 2:.1f}", HEIGHT - 8, bar.label[5:])
            for index, bar in enumerate(bars)
            if index % every == 0
        ),
    )
