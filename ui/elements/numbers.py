"""Numbers in words every page shares: a count with its noun, dollars at a readable precision, short tick labels
and a log axis labelled in full."""

from __future__ import annotations

import math


def plural(n: float, one: str, many: str | None = None) -> str:
    """'1 GPU', '4 GPUs', '1,250 users': a count with its noun in the right number."""
    return f"{n:,.0f} {one if n == 1 else many or one + 's'}"


def three_figures(value: float) -> float:
    """Three significant figures: a prediction is no more precise than that."""
    return float(f"{value:.3g}")


def dollars(value: float) -> str:
    """$1,234 for large sums, $12.35 for small, $0.0042 below a cent; 'n/a' for infinite or missing values."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value >= 1000:
        return f"${value:,.0f}"
    return f"${value:,.2f}" if value >= 0.1 else f"${value:,.4f}"


def short(value: float, money: bool = False) -> str:
    """A tick label: 20, 500, 1K, 20K, 1.5M, 2B; with a $ sign for money ($0.05, $20, $1K)."""
    sign = "$" if money else ""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{sign}{value / scale:.3g}{suffix}"
    return f"{sign}{value:.3g}"


def log_axis(title: str, low: float, high: float, *, money: bool = False) -> dict:
    """A log axis whose ticks are 1-2-5 steps labelled in full ($20, $50, 1K, 10K) instead of plotly's bare minor
    digits; at most about eight labels (every decade's 1 alone over wide ranges)."""
    low, high = max(low, 1e-12), max(high, low * 1.0001)
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    span = math.log10(high / low)
    steps = (1, 1.5, 2, 3, 4, 5, 6, 8) if span < 1.2 else (1, 2, 5) if span <= 3 else (1,)
    ticks = [m * 10.0**d for d in decades for m in steps if low / 1.0001 <= m * 10.0**d <= high * 1.0001]
    if len(ticks) > 9:
        ticks = ticks[:: math.ceil(len(ticks) / 8)]
    return {
        "type": "log",
        "title": {"text": title},
        "tickvals": ticks,
        "ticktext": [short(t, money) for t in ticks],
    }


def in_words(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c': a list as a sentence names it."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"
