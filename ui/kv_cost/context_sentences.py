"""The cost page's sentences about context, written from core.plan.context_cost: how one user's cache grows (a
straight line, more slowly, or not at all past a sliding window), what halving the context does to the users a copy
carries, and one user's decoding speed at a few context lengths. Pure functions of the engine's numbers, so the tests
can pin each sentence to its value."""

from __future__ import annotations

from core.plan.context_cost import ContextCost
from core.plan.model_config import ModelConfig
from ui.elements.numbers import plural


def _window(config: ModelConfig, cost: ContextCost) -> int | None:
    """The context from which one user's cache stops growing: the model's window when every layer slides, else the
    sweep's own flat point."""
    if cost.flat_from is None:
        return None
    return (
        config.sliding_window if config.sliding_layers == config.n_layers and config.sliding_window else cost.flat_from
    )


def _listed(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def growth_sentence(config: ModelConfig, cost: ContextCost) -> tuple[str, str]:
    """How one user's cache grows when the context doubles from T, and what that means for a buyer."""
    window = _window(config, cost)
    if cost.growth == "flat" and window is None:  # a context inside one paged block: doubling it takes no new block
        return (
            f"At {cost.context:,} tokens doubling the context leaves {config.name}'s cache where it is: the engine "
            "keeps the cache in blocks of whole pages, and the longer context still fits the pages already taken.",
            "Memory per user grows in steps of one page of the cache; past the first pages it grows with context.",
        )
    if cost.growth == "flat":
        return (
            f"Past {window:,} tokens {config.name}'s cache stops growing: its sliding window keeps only the last "
            f"{window:,} tokens, so doubling the context from {cost.context:,} leaves the cache where it is.",
            "For this model longer context costs no more memory per user once past the window (it remembers only "
            "the window's tokens word for word); for models without a window, memory grows with context.",
        )
    if cost.growth == "straight":
        capped = f", up to {window:,} tokens, where its sliding window stops it" if window else ""
        doubles = "doubles it" if f"{cost.kv_ratio:.2f}" == "2.00" else f"about doubles it (× {cost.kv_ratio:.2f})"
        return (
            f"The cache grows in a straight line with context here{capped}: doubling the context {doubles}.",
            "Selling longer context windows buys memory in direct proportion, per user, on top of the model's weights.",
        )
    why = (
        f"its {config.sliding_layers} windowed layers stop at {config.sliding_window:,} tokens while the other "
        f"{config.full_layers} keep every token"
        if config.sliding_layers
        else "part of the cache stops growing"
    )
    return (
        f"The cache grows more slowly than the context here: doubling the context multiplies it by "
        f"{cost.kv_ratio:.2f}, less than double, because {why}.",
        "Longer context still buys memory per user, but less than in proportion: the windowed layers' share is capped.",
    )


def speed_clause(cost: ContextCost) -> str:
    """One user's decoding speed at the context lengths where the model is built for it and one user fits."""
    if not cost.speeds:
        return ""
    rates = [f"{speed:,.0f}" for _, speed in cost.speeds]
    at = [f"{context:,}" for context, _ in cost.speeds]
    if len(cost.speeds) == 1:
        return f" One user alone decodes {rates[0]} tokens/s at {at[0]} tokens."
    if len(set(rates)) == 1:
        return f" One user alone decodes {rates[0]} tokens/s at {_listed(at)} tokens alike."
    return f" One user alone decodes {_listed(rates)} tokens/s at {_listed(at)} tokens."


def users_sentence(config: ModelConfig, cost: ContextCost, copy: str) -> tuple[str, str]:
    """What the users chart shows at T and T/2 with one user's speed, and what long context costs (users, speed)."""
    what = (
        f"At {cost.context:,} tokens {copy} serves at most {plural(cost.users, 'user')} at once; at {cost.half:,} "
        f"tokens it would serve {cost.users_half:,}.{speed_clause(cost)} Lines stop where not even one user fits."
    )
    ratio = cost.users_ratio
    if ratio is None:
        users = "Not even one user fits at this context: shorten it or add GPUs per copy."
    elif cost.users_half == cost.users:
        window = _window(config, cost)
        past = f"past its {window:,}-token window " if window else ""
        users = (
            f"Here long context costs no users: {past}the cache stops growing, so halving the context leaves "
            f"{plural(cost.users, 'user')} per copy."
        )
    else:
        change = (
            "about doubles the users a copy can carry"
            if 1.9 <= ratio <= 2.1
            else (f"multiplies the users a copy can carry by {ratio:.2f}")
        )
        users = (
            f"Long context costs concurrency: halving the context {change}, and divides the hardware per user by "
            "as much."
        )
    if len(cost.speeds) >= 2:
        (first, fast), (last, slow) = cost.speeds[0], cost.speeds[-1]
        if slow < 0.9 * fast:
            speed = (
                f" It costs speed too: one user's tokens/s falls from {fast:,.0f} at {first:,} tokens to "
                f"{slow:,.0f} at {last:,}, because every new token reads the whole cache."
            )
        else:
            speed = (
                f" Its speed barely moves ({fast:,.0f} tokens/s at {first:,} tokens, {slow:,.0f} at {last:,}): "
                "the cache each new token reads stays small."
            )
    else:
        speed = ""
    return what, users + speed
