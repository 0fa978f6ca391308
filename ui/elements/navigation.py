"""The dashboard's pages in reading order: one registry for app.py's navigation, the browser tests and the benchmark.

Pure data (no streamlit import) so tests and benchmarks can iterate over it. A page is listed only once it works.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _asset(name: str) -> dict:
    with (ROOT / "assets" / name).open(encoding="utf-8") as handle:
        return json.load(handle)


# The two figures the summaries state, read from the assets (plain JSON: no numpy at import).
N_PARAMS = _asset("model/tiny_transformer.json")["n_params"]  # the shipped model's parameter count
_FILTER = next(iter(_asset("primer.json")["appendix_b"]["filters"].values()))
FILTER_SIZE = f"{len(_FILTER)}×{len(_FILTER[0])}"  # Appendix B's filters, as the primer writes their size


def _blind_class_metric() -> str | None:
    """The class metric of a discarded-world run whose repeat is still wrong while that metric reads full marks
    (assets/model/discarded_world.json), at three decimals; None when no run is blind that way."""
    runs = _asset("model/discarded_world.json")["runs"]
    blind = [r for r in runs if r["class_metric"] == 1.0 and min(r["repeat_trained"], r["repeat_held_out"]) < 1.0]
    return f"{blind[0]['class_metric']:.3f}" if blind else None


BLIND = _blind_class_metric()


@dataclass(frozen=True)
class PageSpec:
    """One page: its script, its readable title, an icon, a one-line summary and the title it always shows.

    The URL path is the script's file stem: on a freshly started server Streamlit resolves the first deep link by
    file name before app.py has built the navigation, so any other path shows a "Page not found" dialog.
    """

    script: str
    title: str
    icon: str
    summary: str
    landmark: str

    @cached_property
    def url_path(self) -> str:
        """The page's address below the app's root ('' for the overview); worked out once, as every glossary link on
        a page reads it."""
        return "" if self.script == HOME_SCRIPT else Path(self.script).stem

    @cached_property
    def path(self) -> Path:
        """Absolute path of the page script."""
        return ROOT / self.script


HOME_SCRIPT = "pages/overview.py"

HOME = PageSpec(
    script=HOME_SCRIPT,
    title="Overview",
    icon=":material/home:",
    summary="The whole model in one picture, five findings with live numbers, and a briefing to take away.",
    landmark="Inside a Transformer",
)

PAGES: tuple[PageSpec, ...] = (
    PageSpec(
        script="pages/cnn_vs_head.py",
        title="CNN vs head",
        icon=":material/grid_on:",
        summary=f"A convolution filter's fixed {FILTER_SIZE} window next to an attention head's window chosen by "
        "content.",
        landmark="CNN filter vs attention head",
    ),
    PageSpec(
        script="pages/qkv_walkthrough.py",
        title="QKV walkthrough",
        icon=":material/stairs:",
        summary="One attention head of primer §5 step by step, temperature and sampling, and the KV cache at work.",
        landmark="One attention head, step by step",
    ),
    PageSpec(
        script="pages/two_layer_trace.py",
        title="Two-layer trace",
        icon=":material/account_tree:",
        summary=f"One prompt through the trained {N_PARAMS}-parameter model: every matrix, every shape, any prompt.",
        landmark="Two layers, every matrix",
    ),
    PageSpec(
        script="pages/how_it_learned.py",
        title="How it learned",
        icon=":material/timeline:",
        summary=f"The {N_PARAMS}-parameter model's training replayed step by step, and the rule the primer's model "
        + (
            f"could not learn, rebuilt: a metric that reads {BLIND} while the model is wrong."
            if BLIND
            else "could not learn, rebuilt and scored by two metrics that tell different stories."
        ),
        landmark="How the model learned, and what a metric missed",
    ),
    PageSpec(
        script="pages/ablation_lab.py",
        title="Ablation lab",
        icon=":material/science:",
        summary="Primer Appendix A as an experiment bench: switch heads off, see what breaks, and why a heatmap is "
        "not evidence.",
        landmark="Switch attention off and see what breaks",
    ),
    PageSpec(
        script="pages/kv_cost.py",
        title="KV-cache cost calculator",
        icon=":material/calculate:",
        summary="The primer's KV-cache formula turned into GPUs, concurrent users and dollars per million tokens.",
        landmark="KV-cache cost calculator",
    ),
)

GLOSSARY = PageSpec(
    script="pages/glossary.py",
    title="Glossary",
    icon=":material/menu_book:",
    summary="The primer's terms and the dashboard's own, in plain words.",
    landmark="Glossary",
)
