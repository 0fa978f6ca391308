"""What the cost page's AppTests share: the page, its presets, and readers of its headline, figures, metrics,
captions, formula and sections."""

from __future__ import annotations

import html
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.plan.model_config import presets
from core.plan.prices import typical_price
from tests.app.helpers import chart_specs, metric_cards, static_tables
from ui.kv_cost.settings import CALCULATOR_OPEN_KEY, ENGINE_OPEN, OWN_MODEL_OPEN, SECTION, SECTIONS

ROOT = Path(__file__).resolve().parents[2]
QWEN2_CONFIG = ROOT / "tests" / "data" / "good_configs" / "qwen2_7b_text.json"  # Qwen2.5-7B's text fields
PAGE = str(ROOT / "pages" / "kv_cost.py")
P = presets()
H100 = typical_price("h100-sxm")  # the price follows the GPU: the H100 preset's typical public price
ENGINE = "Engine settings"  # where a field drawn only in the engine settings is (`reveal`)


PLAN_CARDS = ("Configuration", "Monthly cost", "$ per 1M output tokens", "$ per 1M input tokens")


def headline(at: AppTest) -> list[dict]:
    """The memory calculator's headline cards (the plan's four cards above them left out)."""
    return [card for card in metric_cards(at) if card["metric-label"] not in PLAN_CARDS]


def figures(at: AppTest) -> list[dict]:
    """The page's figures below the plan: the search's cost-against-latency chart (tests/app/test_kv_cost_plan.py)
    left out, so the memory calculator's chart is first."""
    return [f for f in chart_specs(at) if not f["layout"]["title"]["text"].startswith("Monthly cost vs first-token")]


def metrics(at: AppTest) -> dict[str, str]:
    """Every number the page shows as a metric: the headline's cards and the planner sections' st.metric."""
    return {card["metric-label"]: card["metric-value"] for card in metric_cards(at)} | {
        m.label: m.value for m in at.metric
    }


def captions(at: AppTest) -> str:
    """The page's small print: captions, the lines under the headline's numbers and the headline's footnote."""
    footnotes = [
        html.unescape(text)
        for element in at.get("html")
        for text in re.findall(r'<p class="metric-footnote">(.*?)</p>', element.proto.body)
    ]
    return "\n".join([c.value for c in at.caption] + [card["metric-note"] for card in metric_cards(at)] + footnotes)


def open_fields(at: AppTest, is_open: bool = True) -> AppTest:
    """Open (or close) the "Your own model" expander, as a reader's click does: its fields are drawn only while open."""
    at.session_state[OWN_MODEL_OPEN] = is_open
    return at.run()


def open_engine(at: AppTest) -> AppTest:
    """Open the "Engine settings" expander (GPUs per model copy, shared prompt, …), drawn only while open."""
    at.session_state[ENGINE_OPEN] = True
    return at.run()


def reveal(at: AppTest, place: str) -> AppTest:
    """Draw a field that is not on the first screen: open the engine settings or the planner section holding it."""
    return open_engine(at) if place == ENGINE else open_section(at, place)


def open_config(at: AppTest) -> AppTest:
    """Open the "Your own model" expander, which holds the config upload (drawn only while open)."""
    at.session_state[OWN_MODEL_OPEN] = True
    return at.run()


def open_section(at: AppTest, label: str) -> AppTest:
    """Open one of the tabs below the side-by-side table (only the open one is drawn)."""
    assert label in SECTIONS
    at.session_state[SECTION] = label
    return at.run()


def explained(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown if m.value.startswith(("**What you see", "**Why it matters")))


def gb(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.2f} GB"


def formula_html(at: AppTest) -> str:
    return next(e.proto.body for e in at.get("html") if "<h3>The primer's formula with your numbers" in e.proto.body)


def formula_lines(at: AppTest) -> list[str]:
    body = formula_html(at)
    return re.findall(r"<p>(.*?)</p>", body.split('<div class="formula">')[1].split("</div>")[0])


def comparison(at: AppTest) -> list[list[str]]:
    """The side-by-side table's rows as shown, header first."""
    return static_tables(at)["Side by side"]


def with_calculator(app: AppTest) -> AppTest:
    """The page with its memory calculator open, as a reader who opened it has it (it opens closed)."""
    app.session_state[CALCULATOR_OPEN_KEY] = True
    return app
