"""The rating history chart, drawn on the server as an SVG string (no script, no external asset)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["rating_chart", "sparkline"]

_COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989")


def rating_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], width: int = 640, height: int = 240) -> str:
    """An SVG chart of each series' mu (a line) with its mu +- 3 sigma band, over the rated matches.

    ``series`` is ``(label, [(mu, sigma), ...])`` per line, the points in match order.
    """
    left, right, top, bottom = 44, 12, 12, 28
    plot_w, plot_h = width - left - right, height - top - bottom
    points = [p for _, pts in series for p in pts]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rating-chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}"'
        ' role="img" aria-label="rating history: mu with a band of plus or minus 3 sigma">'
    ]
    if not points:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no rating history yet</text></svg>')
        return "".join(parts)
    low = min(mu - 3 * sigma for mu, sigma in points)
    high = max(mu + 3 * sigma for mu, sigma in points)
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    longest = max(len(pts) for _, pts in series)

    def x(i: int) -> float:
        return left + (plot_w * i / (longest - 1) if longest > 1 else plot_w / 2)

    def y(value: float) -> float:
        return top + plot_h * (high - value) / (high - low)

    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fafbfc" stroke="#d0d7de"/>')
    for k in range(5):
        value = low + (high - low) * k / 4
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{left - 4}" y="{y(value) + 4:.1f}" text-anchor="end" font-size="10">{value:.1f}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" font-size="10">rated matches</text>')
    for number, (label, pts) in enumerate(series):
        colour = _COLOURS[number % len(_COLOURS)]
        upper = [f"{x(i):.1f},{y(mu + 3 * sigma):.1f}" for i, (mu, sigma) in enumerate(pts)]
        lower = [f"{x(i):.1f},{y(mu - 3 * sigma):.1f}" for i, (mu, sigma) in reversed(list(enumerate(pts)))]
        line = [f"{x(i):.1f},{y(mu):.1f}" for i, (mu, _) in enumerate(pts)]
        parts.append(f'<polygon class="sigma-band" points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.15" stroke="none"/>')
        parts.append(f'<polyline class="mu-line" points="{" ".join(line)}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + 6}" y="{top + 14 + 12 * number}" font-size="11" fill="{colour}">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def sparkline(values: Sequence[float], width: int = 60, height: int = 16) -> str:
    """A tiny inline SVG line of ``values`` (oldest first) for a table cell, coloured by its direction; empty for fewer than two."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    span = high - low if high - low > 1e-9 else 1.0
    pad = 2

    def y(value: float) -> float:
        return pad + (height - 2 * pad) * (high - value) / span if high - low > 1e-9 else height / 2

    step = (width - 2 * pad) / (len(values) - 1)
    points = " ".join(f"{pad + step * i:.1f},{y(v):.1f}" for i, v in enumerate(values))
    direction = "up" if values[-1] > values[0] else "down" if values[-1] < values[0] else "flat"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sparkline {direction}" viewBox="0 0 {width} {height}" width="{width}"'
        f' height="{height}" role="img" aria-label="mu over the last {len(values)} rated matches: {direction}">'
        f'<polyline points="{points}" fill="none" stroke="currentColor" stroke-width="1.5"/></svg>'
    )
