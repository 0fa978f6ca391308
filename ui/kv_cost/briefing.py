"""The cost calculator's briefing file: the scenario's headline numbers, its sentences, its charts and its link."""

from __future__ import annotations

from core.plan import kv_cache as kv
from core.plan.model_config import ModelConfig
from ui.elements import leads
from ui.elements.briefing import Briefing, Chart
from ui.kv_cost.answer import headline_cards
from ui.kv_cost.charts import kv_chart, memory_figure, users_chart
from ui.kv_cost.numbers import Compared, gb


def headline(config: ModelConfig, dep: kv.Deployment, plan: kv.Plan) -> list[tuple[str, str]]:
    """The page's six headline numbers, as label and value."""
    return [(card.label, card.value) for card in headline_cards(config, dep, plan)]


def sentences(config: ModelConfig, dep: kv.Deployment, plan: kv.Plan) -> list[str]:
    """What the numbers say and what they assume, in the page's words."""
    said = [leads.kv_cost(config, dep, plan)]
    if plan.fits:
        said.append(
            f"One {dep.gpu.name} of a {dep.tp}-GPU copy holds {gb(plan.weights_gpu)} of weights and "
            f"{gb(plan.kv_used_gpu)} of KV cache for {plan.batch:,} users, keeping "
            f"{gb(plan.reserve_gpu)} in reserve."
        )
    said.append(
        f"Assumptions: {dep.kv_dtype.upper()} cache, {dep.weight_bits}-bit weights, {dep.utilisation:.0%} of GPU "
        f"memory for the engine, {dep.efficiency:.0%} of peak memory bandwidth reached, "
        f"${dep.price_per_gpu_hour:,.2f} per GPU-hour. Speed is a ceiling from memory bandwidth alone, so the cost "
        "per token is a floor: real engines are slower and cost more."
    )
    return said


def briefing(
    config: ModelConfig, dep: kv.Deployment, plan: kv.Plan, compared: Compared, *, url: str, link: str
) -> Briefing:
    """The file: headline, sentences, the KV-vs-context, memory and users charts, and the scenario's link (`url` and
    `link` are read while the page runs: the file is built later, outside the page's run)."""
    rows = [(label, p) for label, _, _, p in compared]
    return Briefing(
        title=f"KV-cache cost: {config.name} on {dep.gpu.name}",
        lead=f"{dep.context:,} tokens per user, {dep.users:,} users, {dep.tp} GPU(s) per copy.",
        link=link,
        app_url=url,
        headline=headline(config, dep, plan),
        sentences=sentences(config, dep, plan),
        charts=(
            Chart(kv_chart(compared), "KV cache per user against context length, with GPU memory sizes."),
            Chart(
                memory_figure(rows, dep.gpu.memory_gb),
                "Stacked bars per model: one GPU's memory split into weights, KV cache in use, reserve and free.",
            ),
            Chart(users_chart(compared), "Maximum concurrent users against context length, per model."),
        ),
    )
