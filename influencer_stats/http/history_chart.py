"""A collection's history as a picture: an SVG chart rendered by the service, no script, no asset.

Two panels over one time axis, impressions above and engagements below, each scaled to
its own range and labelled with it; a gap is a red tick under the axis. The points are
those ``history_query.history_page`` answers (``step`` thins them; 1,000 at most).
"""

from __future__ import annotations

from collections.abc import Sequence

from influencer_stats.domain.history import StatsPoint
from influencer_stats.http.history_query import rfc3339
from influencer_stats.http.problems import Reply

SVG = "image/svg+xml"
HEADERS = (
    ("x-content-type-options", "nosniff"),
    ("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'"),
)
WIDTH, HEIGHT = 960, 420
_LEFT, _RIGHT, _TOP, _PANEL, _GAP = 90, 20, 40, 150, 40
_SERIES = (("impressions", "#2563eb"), ("engagements", "#16a34a"))


def chart_reply(collection_id: str, points: Sequence[StatsPoint]) -> Reply:
    """The chart of ``points``, oldest first."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{_LEFT}" y="22" font-size="15" fill="#111827">{collection_id}: stats over time</text>',
    ]
    figures = [p for p in points if not p.gap]
    if not figures:
        parts.append(
            f'<text x="{_LEFT}" y="{_TOP + 40}" fill="#6b7280">no snapshots in this range yet</text>'
        )
    else:
        times = [p.at for p in points]
        start, end = min(times), max(times)
        span = max(end - start, 1.0)
        width = WIDTH - _LEFT - _RIGHT

        def x(at: float) -> float:
            return _LEFT + (at - start) / span * width

        for index, (name, colour) in enumerate(_SERIES):
            top = _TOP + index * (_PANEL + _GAP)
            values = [int(getattr(p, name)) for p in figures]
            low, high = min(values), max(values)
            rise = max(high - low, 1)

            def y(
                value: int, top: int = top, low: int = low, rise: int = rise, flat: bool = high == low
            ) -> float:
                if flat:  # one value throughout: a line across the middle
                    return top + _PANEL / 2
                return top + _PANEL - 4 - (value - low) / rise * (_PANEL - 8)  # 4 px inside the frame

            line = " ".join(f"{x(p.at):.1f},{y(v):.1f}" for p, v in zip(figures, values, strict=True))
            parts += [
                f'<rect x="{_LEFT}" y="{top}" width="{width}" height="{_PANEL}" fill="none" stroke="#e5e7eb"/>',
                *_value_labels(top, low, high),
                f'<text x="{_LEFT + 6}" y="{top + 16}" fill="{colour}">{name}</text>',
                f'<polyline class="series {name}" fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>',
            ]
            if len(figures) == 1:
                parts.append(
                    f'<circle cx="{line.split(",")[0]}" cy="{line.split(",")[1]}" r="3" fill="{colour}"/>'
                )
        axis = _TOP + 2 * _PANEL + _GAP + 18
        parts += [
            *_time_labels(axis, start, end),
            *(
                f'<line class="gap" x1="{x(p.at):.1f}" x2="{x(p.at):.1f}" y1="{axis - 14}" '
                f'y2="{axis - 6}" stroke="#dc2626" stroke-width="2"/>'
                for p in points
                if p.gap
            ),
        ]
    parts.append("</svg>")
    return Reply(200, "\n".join(parts).encode(), SVG, HEADERS)


def _value_labels(top: int, low: int, high: int) -> list[str]:
    """A panel's range beside it: its highest value at the top, its lowest at the bottom; a
    flat series (one value throughout), its one value once, beside the line across the middle."""
    if low == high:
        return [
            f'<text class="value" x="{_LEFT - 8}" y="{top + _PANEL / 2 + 4:.0f}" text-anchor="end" '
            f'fill="#374151">{low:,}</text>'
        ]
    return [
        f'<text class="value" x="{_LEFT - 8}" y="{top + 10}" text-anchor="end" fill="#374151">{high:,}</text>',
        f'<text class="value" x="{_LEFT - 8}" y="{top + _PANEL}" text-anchor="end" fill="#374151">{low:,}</text>',
    ]


def _time_labels(axis: int, start: float, end: float) -> list[str]:
    """The time axis: its first and last instants at its ends; one instant (a single point) once."""
    if rfc3339(start) == rfc3339(end):
        return [f'<text class="time" x="{_LEFT}" y="{axis}" fill="#374151">{rfc3339(start)}</text>']
    return [
        f'<text class="time" x="{_LEFT}" y="{axis}" fill="#374151">{rfc3339(start)}</text>',
        f'<text class="time" x="{WIDTH - _RIGHT}" y="{axis}" text-anchor="end" fill="#374151">{rfc3339(end)}</text>',
    ]
