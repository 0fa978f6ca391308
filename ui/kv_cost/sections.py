"""The cost page's reference sections below the table: budget effects, GPU options, the model's anatomy and the
sources of every figure."""

from __future__ import annotations

from functools import lru_cache

import streamlit as st

from core.plan import kv_cache as kv
from core.plan.model_config import (
    ModelConfig,
    activation_shapes,
    active_param_count,
    kaplan_estimate,
    param_count,
    preset_sources,
    presets,
    reference_models,
    weight_inventory,
)
from core.plan.prices import cost_per_million
from ui.elements.glossary import link
from ui.elements.widgets import OnFirstUse
from ui.kv_cost.arrow_rows import arrow_table
from ui.kv_cost.numbers import count, gb, money, size
from ui.kv_cost.own_model import CUSTOM, PRIMER
from ui.kv_cost.planner import calibration_sources
from ui.kv_cost.state import own_price
from ui.kv_cost.tables import table

pa = OnFirstUse("pyarrow")


def finance(config: ModelConfig, dep: kv.Deployment, effects: kv.BudgetEffects) -> None:
    """The budget lines (doubling the context, GQA/MLA, FP8) and the bigger-GPU-or-more-GPUs table."""
    st.subheader("Why it matters for the budget")
    base, doubled, fp8, mha, t = effects.base, effects.doubled, effects.fp8, effects.mha_bytes_per_token, dep.context
    at_tp = "" if effects.tp == dep.tp else f" (at {effects.tp} GPUs per copy, the fewest that hold it)"

    def user_hour(p: kv.Plan) -> str:
        cost = kv.cost_per_user_hour(p, dep.price_per_gpu_hour)
        return "n/a (no user fits)" if cost is None else money(cost)

    lines = [
        f"**Doubling the context** from {t:,} to {2 * t:,} tokens takes one user's cache from "
        f"{gb(base.kv_per_user)} to {gb(doubled.kv_per_user)} and users per copy{at_tp} from {base.max_users:,} to "
        f"{doubled.max_users:,}: the GPU cost per user-hour goes from {user_hour(base)} to {user_hour(doubled)}.",
    ]
    if mha > base.kv_per_token:
        lines.append(
            f"**{config.attention_kind} saves memory**: {config.name} stores {size(base.kv_per_token)} per token; "
            f"with plain multi-head attention it would store {size(mha)}, {mha / base.kv_per_token:,.1f}× as much."
        )
    elif config.n_heads % 4 == 0:
        lines.append(
            f"**{config.name} uses plain multi-head attention**: grouped-query attention with {config.n_heads // 4} "
            f"KV heads (a quarter) would cut its {size(base.kv_per_token)} per token to a quarter."
        )
    if dep.kv_dtype != "fp8":
        lines.append(
            f"**An FP8 KV cache** stores {kv.element_bytes('fp8') / kv.element_bytes(dep.kv_dtype):.2g}× the bytes "
            f"of {dep.kv_dtype.upper()}: users per copy{at_tp} go from {base.max_users:,} to {fp8.max_users:,}."
        )
    st.markdown("\n".join(f"- {line}" for line in lines))
    _gpu_options(config, dep)


def _even_column(gpu: kv.Gpu) -> str:
    return f"cheaper per token than {gpu.name} below ($/h)"


OWN_PRICE = "its price ($/h)"
AT_OWN_PRICE = "$ per 1M output tokens at full batch, for comparison"


@lru_cache(maxsize=64)  # 64 × ~10 kB
def _options(
    config: ModelConfig, dep: kv.Deployment, prices: tuple[tuple[str, float], ...]
) -> tuple[list[kv.GpuOption], pa.Table]:
    """Each GPU type sized for the model, at its own price (`prices`: the reader's own, else the typical offer)."""
    gpu, price_of = dep.gpu, dict(prices)
    options = kv.gpu_options(config, dep)
    rows = arrow_table(
        [
            {
                "GPU": o.gpu.name,
                OWN_PRICE: round(price_of[o.gpu.id], 2),
                AT_OWN_PRICE: round(cost, 4)
                if (cost := cost_per_million(price_of[o.gpu.id], o.tokens_per_second_per_gpu))
                else None,
                _even_column(gpu): round(o.break_even_price, 2) if o.break_even_price else None,
                "GPUs per copy needed": o.tp,
                "users per model copy": o.users_per_copy,
                "tokens/s per GPU (full batch)": round(o.tokens_per_second_per_gpu, 1)
                if o.tokens_per_second_per_gpu
                else None,
                "memory (GB)": o.gpu.memory_gb,
                "bandwidth (TB/s)": o.gpu.bandwidth_tb_s,
            }
            for o in options
        ]
    )
    return options, rows


def _gpu_options(config: ModelConfig, dep: kv.Deployment) -> None:
    gpu = dep.gpu
    prices = tuple((g, own_price(g)) for g in kv.gpus())
    options, rows = _options(config, dep, prices)
    st.markdown(
        f"**A bigger GPU or more GPUs?** For {config.name} at {dep.context:,} tokens: the smallest number of each GPU "
        "that holds the model, each at its own price (yours, or its typical public on-demand price), its cost per "
        f"1M output tokens at full batch, and the hourly price under which it beats {gpu.name} at "
        f"${dep.price_per_gpu_hour:,.2f}/h on cost per token."
    )
    table(rows, money_columns=(OWN_PRICE, AT_OWN_PRICE, _even_column(gpu)))
    price_of = dict(prices)
    costs = [(cost, o) for o in options if (cost := cost_per_million(price_of[o.gpu.id], o.tokens_per_second_per_gpu))]
    if costs:
        cost, best = min(costs, key=lambda item: item[0])
        st.markdown(
            f"At each GPU's own price the cheapest per output token at full batch is the **{best.gpu.name}** "
            f"({best.tp} per copy, ${price_of[best.gpu.id]:,.2f}/h): {money(cost)} per 1M, for comparison."
        )
    winners = [o for o in options if o.break_even_price and o.gpu.id != gpu.id]
    if winners:
        best = max(winners, key=lambda o: o.break_even_price / dep.price_per_gpu_hour)
        st.markdown(
            f"The largest margin: a {best.gpu.name} ({best.tp} per copy) is cheaper per token as long as it "
            f"costs under **${best.break_even_price:,.2f}** an hour, because it serves "
            f"{best.tokens_per_second_per_gpu:,.0f} tokens/s per GPU."
        )


def anatomy(config: ModelConfig, dep: kv.Deployment, result: kv.Plan) -> None:
    """Primer §4 for the chosen model: weight inventory, exact count vs 12·L·d², activations, reference points."""
    st.subheader("Model anatomy (primer §4)")
    table(_inventory(config), download=("weight inventory", "kv-inventory"), readable=("parameters each", "total"))
    total = param_count(config)
    cols = st.columns(3)
    cols[0].metric("Parameters computed from the config", f"{total:,}")
    if config.published_params:
        cols[0].caption(
            f"Published: {count(config.published_params)} "
            f"({(total - config.published_params) / config.published_params:+.2%} difference)."
        )
    if config.is_moe:
        published = config.published_active_params
        cols[0].caption(
            f"Active per token: {count(active_param_count(config))}"
            + (f" (published {count(published)})" if published else "")
        )
    rule = kaplan_estimate(config)
    cols[1].metric("Rule of thumb 12 · L · d_model²", f"{rule:,}")
    cols[1].caption(
        f"= {rule / total:.0%} of the exact count. The rule counts 4·d_model² of attention and "
        "8·d_model² of MLP per layer and no embeddings"
        f"{'; every expert of a mixture adds its own MLP' if config.is_moe else ''}."
    )
    cols[2].metric(f"Weights at {dep.weight_bits}-bit", gb(result.weights_bytes))
    cols[2].caption(f"= {kv.to_gib(result.weights_bytes):,.2f} GiB")
    st.markdown(
        f"{link('embedding')} and {link('unembedding')}: "
        f"{'tied, one matrix serves both' if config.tied_embeddings else 'two separate matrices'}."
    )
    st.markdown(f"**Activations at T = {dep.context:,}** (recomputed every forward pass; only K and V are kept):")
    st.dataframe(_activations(config, dep.context), hide_index=True, width="stretch", height="content")
    st.markdown("**Reference points**: the exact count and the rule of thumb side by side.")
    table(_references(), readable=("exact parameters", "12·L·d_model²"))


@lru_cache(maxsize=64)  # 64 × ~2 kB
def _inventory(config: ModelConfig) -> pa.Table:
    """The weight inventory of primer §4 for this model, one row per weight."""
    return arrow_table(
        [
            {
                "part": r.part,
                "weight": r.weight,
                "shape": r.shape,
                "parameters each": r.each,
                "copies": r.copies,
                "total": r.total,
            }
            for r in weight_inventory(config)
        ]
    )


@lru_cache(maxsize=64)  # 64 × ~2 kB
def _activations(config: ModelConfig, context: int) -> pa.Table:
    """Primer §4's activation table for this model at the chosen context, all 15 rows."""
    rows = activation_shapes(config, context)
    return arrow_table([{"activation": a, "shape": s, "what it is": note} for a, s, _, note in rows])


@lru_cache(maxsize=1)
def _references() -> pa.Table:
    """GPT-2 small, the primer's 7B and its tiny model: exact parameter counts beside 12·L·d_model²."""
    references = [
        ("GPT-2 small", presets()["gpt2"]),
        ("Primer's modern 7B", presets()[PRIMER]),
        ("Primer's tiny model (§6)", reference_models()["tiny-736"]),
    ]
    return arrow_table(
        [
            {
                "model": label,
                "L": c.n_layers,
                "d_model": c.d_model,
                "exact parameters": param_count(c),
                "12·L·d_model²": kaplan_estimate(c),
                "rule ÷ exact": round(kaplan_estimate(c) / param_count(c), 3),
            }
            for label, c in references
        ]
    )


def sources(model_id: str, config: ModelConfig, gpu: kv.Gpu) -> None:
    """Where every preset figure, default, measurement and price comes from: documents a reader can open."""
    st.markdown("**Sources of every preset figure and default**")
    found = {} if model_id == CUSTOM else preset_sources(model_id)  # a custom model has no published sources
    lines = [f"**{config.name}, {what}**: {text}" for what, text in found.items()]
    lines += [f"**{gpu.name}**: {gpu.source}", f"**{gpu.name}, FP8 and {gpu.link}**: {gpu.link_source}"]
    lines += [f"**{key}**: {reason}" for key, reason in kv.default_reasons().items()]
    lines += calibration_sources()
    st.markdown("\n".join(f"- {line}" for line in lines))
