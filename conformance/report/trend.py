"""The score of each behaviour on each build, across releases, as a small self-contained SVG: per
behaviour, the share of its items that conform (pass, or differ from eager only by design or benignly:
known bugs and failures do not) on every build of one device, in release order. Every label is
escaped; nothing is fetched."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from conformance.report.builds import in_release_order
from conformance.report.kinds import NOT_BUGS

if TYPE_CHECKING:
    from conformance.report.model import Report

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")


def scores(report: Report, device: str) -> dict[str, list[float | None]]:
    """Per behaviour, per build in release order: conforming / items that ran (None: none ran there); a
    difference by design or benign conforms (Note [A difference is not a failure])."""
    builds = [b for b in in_release_order(report.builds) if device in report.devices(b.id)]
    out: dict[str, list[float | None]] = {}
    for beh in report.behaviors:
        row: list[float | None] = []
        for b in builds:
            c = report.cell(beh, b.id, device)
            fine = sum(n for k, n in c.kinds.items() if k in NOT_BUGS)
            row.append((c.counts["pass"] + fine) / c.ran if c.ran else None)
        out[beh] = row
    return out


def svg(report: Report, device: str = "cpu") -> str:
    """The plot, or "" with fewer than two builds on the device."""
    builds = [b for b in in_release_order(report.builds) if device in report.devices(b.id)]
    if len(builds) < 2:
        return ""
    data = scores(report, device)
    values = [v for row in data.values() for v in row if v is not None]
    low = min([0.5, *values])
    width, height, left, right, top, bottom = 560, 220, 44, 150, 14, 34
    span_x = (width - left - right) / (len(builds) - 1)

    def x(i: int) -> float:
        return left + i * span_x

    def y(v: float) -> float:
        return top + (1.0 - v) / (1.0 - low) * (height - top - bottom)

    title = f"share of items conforming per behaviour, {html.escape(device)}"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'font-family="sans-serif" font-size="10"><title>{title}</title>']
    for tick in (low, (low + 1) / 2, 1.0):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>'
                     f'<text x="{left - 4}" y="{y(tick) + 3:.1f}" text-anchor="end">{tick:.0%}</text>')
    for i, b in enumerate(builds):
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 14}" text-anchor="middle">'
                     f"{html.escape(b.torch_version.split('+')[0])}</text>")
    for k, (beh, row) in enumerate(data.items()):
        colour = COLOURS[k % len(COLOURS)]
        points = [(x(i), y(v)) for i, v in enumerate(row) if v is not None]
        if points:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="2.5" fill="{colour}"/>' for px, py in points]
        last = next((v for v in reversed(row) if v is not None), None)
        label = f"{beh} {last:.0%}" if last is not None else beh
        parts.append(f'<text x="{width - right + 6}" y="{top + 12 + 14 * k}" fill="{colour}">'
                     f"{html.escape(label)}</text>")
    parts.append("</svg>")
    return "\n".join(parts)
