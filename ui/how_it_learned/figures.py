"""How it learned: the page's figures (plotly graph_objects, one constructor call each), cached by small keys.

The curves share one x-axis: training steps on a log scale, as the checkpoints are log-spaced (most of the change
happens in the first few hundred steps). A log axis has no 0, so step 0 (the random start) is drawn half a step to
the left of step 1 and its tick says 0. Each curve marks the shown step (a solid line) and the step where the copula
rule first holds on every held-out type (dashed, named). The embedding picture keeps one frame for every step (the
axes span every checkpoint's points), so the words move and the axes do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from core.explain.checkpoints import WORD_CLASSES, EmbeddingMap, Emergence, Replay, embedding_map, head_patterns
from core.explain.discarded_world import RunRow
from ui.elements.comparisons import LINE_COLOURS, grouped_bars
from ui.elements.figures import FONT, heatmap

ZERO_AT = 0.5  # where step 0 sits on the log axis
STEP_COLOUR, RULE_COLOUR = "#1b1f24", "#b35900"
CLASS_COLOURS = dict(zip(WORD_CLASSES, ("#1f5f99", "#b35900", "#4d8f3a", "#6b6b6b"), strict=True))
CLASS_SYMBOLS = dict(zip(WORD_CLASSES, ("circle", "diamond", "square", "triangle-up"), strict=True))


def log_x(steps: Sequence[int]) -> list[float]:
    """Steps as drawn on the log axis (step 0 at ZERO_AT)."""
    return [float(s) if s > 0 else ZERO_AT for s in steps]


def _step_axis(last: int) -> dict:
    ticks = [t for t in (1, 10, 100, 1000) if t < last] + [last]
    return {
        "type": "log",
        "title": {"text": "training step (log scale)"},
        "tickvals": [ZERO_AT, *ticks],
        "ticktext": ["0", *(f"{t:,}" for t in ticks)],
        "range": [np.log10(ZERO_AT) - 0.05, np.log10(last) + 0.05],
    }


def _layout(title: str, height: int, **extra: object) -> dict:
    return {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 74, "b": 10},  # the title, then the rule's label above the plot
        "font": FONT,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "legend": {"orientation": "h", "y": -0.32, "x": 0, "yanchor": "top"},
        "template": "none",
        **extra,
    }


def _marks(step: int, rule: int | None, last: int) -> tuple[list[dict], list[dict]]:
    """The shown step (solid, labelled at the bottom) and the rule's first step (dashed, labelled at the top)."""
    shapes, notes = [], []
    low, high = np.log10(ZERO_AT), np.log10(last)
    for at, colour, dash, text, top in (
        (step, STEP_COLOUR, "solid", f"step {step:,}", False),
        *(((rule, RULE_COLOUR, "dash", f"rule holds: step {rule:,}", True),) if rule is not None else ()),
    ):
        x = log_x([at])[0]
        right = (np.log10(x) - low) / (high - low) > 0.5  # a label past the middle reads leftwards, inside the plot
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": colour, "width": 2, "dash": dash},
            }
        )
        notes.append(
            {
                "x": np.log10(x),
                "y": 1.0 if top else 0.02,
                "xref": "x",
                "yref": "paper",
                "text": text,
                "showarrow": False,
                "xanchor": "right" if right else "left",
                "yanchor": "bottom",
                "xshift": -4 if right else 4,
                "bgcolor": "rgba(255,255,255,0.85)",
                "font": {"color": colour},
            }
        )
    return shapes, notes


@lru_cache(maxsize=256)  # 256 × ~10 kB
def curves(replay: Replay, names: tuple[tuple[str, str], ...], index: int, title: str, y_title: str) -> go.Figure:
    """The replay's metrics `names` ((metric, legend label) pairs) over the steps, the shown checkpoint marked."""
    x = log_x(replay.steps.tolist())
    data = [
        {
            "type": "scatter",
            "x": x,
            "y": replay.values[name].tolist(),
            "mode": "lines+markers",
            "name": label,
            "marker": {"size": 5},
            "line": {"color": LINE_COLOURS[i], "dash": ("solid", "dot", "dash")[i % 3]},
            "customdata": replay.steps.tolist(),
            "hovertemplate": f"{label}<br>step %{{customdata:,}}: %{{y:.3f}}<extra></extra>",
        }
        for i, (name, label) in enumerate(names)
    ]
    current = {
        "type": "scatter",
        "x": [x[index]] * len(names),
        "y": [float(replay.values[name][index]) for name, _ in names],
        "mode": "markers",
        "name": "shown step",
        "marker": {"size": 11, "color": STEP_COLOUR, "symbol": "circle-open", "line": {"width": 2}},
        "hoverinfo": "skip",
    }
    shapes, notes = _marks(int(replay.steps[index]), replay.emergence[0], int(replay.steps[-1]))
    ranged = {"range": [-0.05, 1.08]} if all(name != "loss" for name, _ in names) else {"rangemode": "tozero"}
    spec = _layout(
        title,
        360,
        xaxis=_step_axis(int(replay.steps[-1])),
        yaxis={"title": {"text": y_title}, **ranged},
        shapes=shapes,
        annotations=notes,
    )
    return go.Figure({"data": [*data, current], "layout": spec})


@lru_cache(maxsize=8)  # 8 × ~20 kB
def _embedding(replay: Replay) -> EmbeddingMap:
    return embedding_map(replay)


@lru_cache(maxsize=256)  # 256 × ~20 kB
def embeddings(replay: Replay, index: int) -> tuple[go.Figure, EmbeddingMap]:
    """The 20 embedding rows at one checkpoint in the final model's principal plane, one colour per word class."""
    emap = _embedding(replay)
    points = emap.points[index]
    low, high = emap.points.min(axis=(0, 1)), emap.points.max(axis=(0, 1))
    pad = 0.08 * (high - low)
    data = []
    for kind in WORD_CLASSES:
        rows = [i for i, c in enumerate(emap.classes) if c == kind]
        data.append(
            {
                "type": "scatter",
                "x": points[rows, 0].tolist(),
                "y": points[rows, 1].tolist(),
                "mode": "markers+text",
                "name": kind + "s",
                "text": [replay.vocabulary[i] for i in rows],
                "textposition": "top center",
                "textfont": {"size": 12, "color": CLASS_COLOURS[kind]},
                "marker": {"size": 10, "color": CLASS_COLOURS[kind], "symbol": CLASS_SYMBOLS[kind]},
                "hovertemplate": "%{text}<br>(%{x:.2f}, %{y:.2f})<extra></extra>",
            }
        )
    spec = _layout(
        f"embedding rows E at step {int(replay.steps[index]):,}",
        420,
        xaxis={"title": {"text": "1st axis"}, "range": [low[0] - pad[0], high[0] + pad[0]], "zeroline": False},
        yaxis={"title": {"text": "2nd axis"}, "range": [low[1] - pad[1], high[1] + pad[1]], "zeroline": False},
    )
    return go.Figure({"data": data, "layout": spec}), emap


@lru_cache(maxsize=512)  # 512 × ~1 kB
def patterns(replay: Replay, index: int, tokens: tuple[str, ...]) -> np.ndarray:
    """Every head's attention pattern on a prompt at one checkpoint: one 4-token pass, kept."""
    out = head_patterns(replay.model(index), tokens)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=1024)  # 1,024 × ~2 kB
def head_map(replay: Replay, index: int, tokens: tuple[str, ...], layer: int, head: int) -> go.Figure:
    """One head's attention weights on the prompt at one checkpoint (rows read, columns are read; masked cells grey)."""
    rows = [f"{i + 1} {t}" for i, t in enumerate(tokens)]
    weights = patterns(replay, index, tokens)[layer, head]
    fig = heatmap(weights, x=rows, y=rows, title=f"layer {layer + 1}, head {head + 1}", signed=False, decimals=2)
    room = 80  # room for the title above the top axis, as the two-layer trace's heatmaps keep
    fig.update_layout(margin={"t": room}, height=fig.layout.height + room - 50, template="none")
    fig.update_traces(textfont_size=12)
    return fig


@lru_cache(maxsize=64)  # 64 × ~2 kB
def siblings(runs: tuple[Emergence, ...], last: int) -> go.Figure:
    """Each run's first logged step with the rule on every held-out type, and the step it holds from, seed by seed."""
    labels = [f"seed {r.seed}" + (" (shipped)" if r.seed == 0 else "") for r in runs]
    data = [
        {
            "type": "scatter",
            "x": log_x([r.first if r.first is not None else last for r in runs]),
            "y": labels,
            "mode": "markers",
            "name": "first holds",
            "marker": {"size": 12, "color": LINE_COLOURS[0], "symbol": "circle"},
            "customdata": [r.first for r in runs],
            "hovertemplate": "%{y}: first holds at step %{customdata:,}<extra></extra>",
        },
        {
            "type": "scatter",
            "x": log_x([r.stays if r.stays is not None else last for r in runs]),
            "y": labels,
            "mode": "markers",
            "name": "holds from here to the end",
            "marker": {"size": 12, "color": RULE_COLOUR, "symbol": "diamond-open", "line": {"width": 2}},
            "customdata": [r.stays for r in runs],
            "hovertemplate": "%{y}: holds from step %{customdata:,}<extra></extra>",
        },
    ]
    axis = _step_axis(last)
    axis["range"] = [1.5, np.log10(last) + 0.05]  # logged every 50 steps (RECIPE.log_every): none holds it before
    spec = _layout(
        "when the copula rule appears, run by run (training logs)",
        420,
        xaxis=axis,
        yaxis={"type": "category", "autorange": "reversed"},
    )
    return go.Figure({"data": data, "layout": spec})


@lru_cache(maxsize=4)  # 4 × ~10 kB
def discarded_bars(rows: tuple[RunRow, ...], copula_slots: int, trained: int, held_out: int) -> go.Figure:
    """The two metrics side by side for every run: the class metric the primer watched (on the discarded world's
    `copula_slots`), and repeat accuracy on its `trained` and `held_out` repeat types."""
    return grouped_bars(
        [r.name for r in rows],
        [
            (f"class metric (right class, all {copula_slots} copula slots)", [r.class_metric for r in rows]),
            (f"repeat right, {trained} trained types", [r.repeat_trained for r in rows]),
            (f"repeat right, {held_out} held-out types", [r.repeat_held_out for r in rows]),
        ],
        title="the metric the primer watched, and the rule it was meant to show",
        y_title="share",
        height=380,
    )
