"""A few line plots side by side as a hand-written SVG file (no plotting library needed).

>>> svg = line_plots([{"title": "loss", "xlabel": "step", "ylabel": "loss",
...                    "series": [("a", [0, 1, 2], [3.0, 2.5, 2.2])]}])
>>> svg.startswith("<svg")
True
"""
import math
from html import escape

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
PANEL_W, PANEL_H = 460, 320
MARGIN = {"left": 62, "right": 16, "top": 34, "bottom": 46}
MAX_POINTS = 800          # a series is thinned to about this many points


def nice_ticks(lo, hi, n=5):
    """About n round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 12))
    return ticks


def _fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def _thin(xs, ys):
    n = len(xs)
    stride = max(1, math.ceil(n / MAX_POINTS))
    idx = list(range(0, n, stride))
    if idx[-1] != n - 1:
        idx.append(n - 1)
    return [xs[i] for i in idx], [ys[i] for i in idx]


def _panel(p, x0):
    """The SVG elements of one panel whose left edge is at x0."""
    series = [s for s in p["series"] if len(s[1])]
    xs_all = [x for s in series for x in s[1]]
    ys_all = [y for s in series for y in s[2] if math.isfinite(y)]
    xt = nice_ticks(min(xs_all, default=0), max(xs_all, default=1))
    ylo, yhi = p.get("ylim") or (min(ys_all, default=0), max(ys_all, default=1))
    yt = nice_ticks(ylo, yhi)
    left, top = x0 + MARGIN["left"], MARGIN["top"]
    w = PANEL_W - MARGIN["left"] - MARGIN["right"]
    h = PANEL_H - MARGIN["top"] - MARGIN["bottom"]

    def sx(x):
        return left + (x - xt[0]) / (xt[-1] - xt[0]) * w

    def sy(y):
        y = min(max(y, yt[0]), yt[-1])
        return top + h - (y - yt[0]) / (yt[-1] - yt[0]) * h

    out = [(f'<text x="{left + w / 2:.1f}" y="20" text-anchor="middle" font-size="14" '
            f'font-weight="bold">{escape(p.get("title", ""))}</text>'),
           f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#444"/>']
    for t in xt:
        out.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + h}" '
                   f'stroke="#e5e5e5"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{top + h + 16}" text-anchor="middle" '
                   f'font-size="11">{_fmt(t)}</text>')
    for t in yt:
        out.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{left + w}" y2="{sy(t):.1f}" '
                   f'stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" '
                   f'font-size="11">{_fmt(t)}</text>')
    out.append(f'<text x="{left + w / 2:.1f}" y="{PANEL_H - 8}" text-anchor="middle" '
               f'font-size="12">{escape(p.get("xlabel", ""))}</text>')
    out.append(f'<text x="{x0 + 14}" y="{top + h / 2:.1f}" text-anchor="middle" font-size="12" '
               f'transform="rotate(-90 {x0 + 14} {top + h / 2:.1f})">'
               f'{escape(p.get("ylabel", ""))}</text>')
    for i, s in enumerate(series):
        label, xs, ys = s[:3]
        color = s[3] if len(s) > 3 else COLORS[i % len(COLORS)]
        dash = s[4] if len(s) > 4 else ""
        xs, ys = _thin(list(xs), list(ys))
        pts = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys) if math.isfinite(y))
        style = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6"{style} '
                   f'points="{pts}"/>')
        ly = top + 16 + 16 * i
        out.append(f'<line x1="{left + w - 150}" y1="{ly - 4}" x2="{left + w - 128}" '
                   f'y2="{ly - 4}" stroke="{color}" stroke-width="2"{style}/>')
        out.append(f'<text x="{left + w - 122}" y="{ly}" font-size="11">{escape(label)}</text>')
    for text_y, note in enumerate(p.get("notes", ())):
        out.append(f'<text x="{left + 8}" y="{top + h - 10 - 14 * text_y}" font-size="11" '
                   f'fill="#333">{escape(note)}</text>')
    return out


def line_plots(panels, caption=""):
    """SVG text: the panels side by side. A panel is a dict with ``title``, ``xlabel``,
    ``ylabel``, optional ``ylim`` and ``notes`` (lines of text), and ``series``: a list of
    ``(label, xs, ys[, color[, dasharray]])``."""
    width, height = PANEL_W * len(panels), PANEL_H + (22 if caption else 0)
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">'),
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for k, p in enumerate(panels):
        out += _panel(p, k * PANEL_W)
    if caption:
        out.append(f'<text x="{width / 2:.1f}" y="{height - 6}" text-anchor="middle" '
                   f'font-size="11" fill="#555">{escape(caption)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write(path, panels, caption=""):
    with open(path, "w") as fh:
        fh.write(line_plots(panels, caption))
