"""The two-layer trace's link: every value it carries is checked before the widgets read it (`read_link`).

The prompt is kept as typed text; the temperature, layer, shape-table row and open tab as their labels.
"""

from __future__ import annotations

from core.trace_views import MAX_TOKENS, parse_prompt, shape_table
from core.transformer import Model
from ui import link_reader as lr

PAGE = "trace"
MAX_PROMPT_CHARS = 400  # a prompt of MAX_TOKENS words fits in far fewer
TAU_RANGE = (0.1, 3.0)  # the temperature slider's bounds


def read_link(model: Model, views: list[str]) -> None:
    """Check the link's values before any widget reads them; a refused one is named in the page's one notice."""
    rows = shape_table(model.config, 1)
    params = {
        "trace_prompt": lr.text(
            lambda text: parse_prompt(text, model.vocabulary, MAX_TOKENS),
            limit=MAX_PROMPT_CHARS,
            instead="the default prompt is traced",
        ),
        "trace_tau": lr.number(*TAU_RANGE, default=1.0),
        "trace_layer": lr.choice([f"Layer {i + 1}" for i in range(model.config.n_layers)], default="Layer 1"),
        "trace_step": lr.choice(
            [row.step for row in rows], aliases={row.key: row.step for row in rows}, default=rows[0].step
        ),
        "trace_view": lr.choice(views, default=views[0]),
    }
    lr.read_link(PAGE, params)
    lr.link_notice(PAGE)
