"""The two-layer trace's engine results, cached by small keys: one forward pass per prompt, the copula probes, the
training log and the corpus's prompt presets. Read-only and shared by every session."""

from __future__ import annotations

from functools import cache, lru_cache

from core.explain.trace_views import (
    CopulaProbe,
    CopulaRow,
    copula_probe,
    copula_table,
    corpus_presets,
    primer_section6,
)
from core.explain.transformer import Trace, forward
from core.explain.weights import trained_model, training_log


@lru_cache(maxsize=256)  # 256 × ~2 kB
def cached_trace(tokens: tuple[str, ...]) -> Trace:
    """One forward pass per prompt, shared by every chart of the page (the trace is read-only)."""
    model = trained_model()
    return forward(model, model.encode(tokens))


@lru_cache(maxsize=64)  # 64 × ~1 kB
def probe(prompt: tuple[str, ...]) -> CopulaProbe:
    """The copula read-out of one prompt (computed once per server)."""
    return copula_probe(trained_model(), prompt)


@cache
def copula_rows() -> list[CopulaRow]:
    """All 16 copula types scored in one batched pass (computed once per server)."""
    return copula_table(trained_model())


@cache
def shipped_training_log() -> dict[str, list]:
    """The shipped model's training log, read once."""
    return training_log(trained_model())


@cache
def prompt_presets() -> dict[str, str]:
    """Preset prompt -> its label: the primer's prompts first (from the primer asset), then the world's sentences."""
    primer = primer_section6()
    prompts = [primer.readout["prompt"], *(row["prompt"] for row in primer.copula_probe["prompts"])]
    presets = {" ".join(prompt): f"{' '.join(prompt)}  (primer §6)" for prompt in prompts}
    for prompt, held_out in corpus_presets():
        presets.setdefault(prompt, f"{prompt}  (world sentence{', held out of training' if held_out else ''})")
    return presets


DEFAULT_PROMPT = next(iter(prompt_presets()))
