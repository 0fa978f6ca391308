"""The tiny Transformer of primer §5, §6 and Appendix A: one forward pass, several configurations, a named trace.

Primer conventions: row vectors (x @ W); W_Q, W_K, W_V are d_model × (h·d_k) and head j owns columns
j·d_k … (j+1)·d_k; W_O is (h·d_v) × d_model and head j owns rows j·d_v … (j+1)·d_v. float64 throughout, so the
identities the primer states "to the last bit" can be tested with ==. Trace names follow TransformerLens hook points.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Literal

import numpy as np

from core.explain.attention import attend, causal_mask, product_for, softmax
from core.explain.primer import hand_example

Trace = Mapping[str, np.ndarray]
HeadKey = tuple[int, int]  # (layer, head), both counted from 0
AttentionMode = Literal["on", "off", "deleted"]


@dataclass(frozen=True)
class Config:
    """Architecture switches: the §5 hand example and the §6 trained model are two settings of the same pass."""

    vocab_size: int
    d_model: int
    n_heads: int
    d_head: int
    n_layers: int
    d_ff: int = 0  # 0: no MLP block
    layer_norm: bool = True  # pre-LN before each block and a final LN before the read-out
    positions: bool = True  # fixed sinusoidal positional encoding added to the embeddings
    biases: bool = True  # b_Q, b_K, b_V, b_O, b_1, b_2
    readout: bool = True  # final LN (if layer_norm), tied unembedding U = Eᵀ, softmax
    ln_eps: float = 1e-5
    # Sum the attention path's products in one fixed order (core.explain.attention.matmul) instead of BLAS, so a
    # KV-cache step reproduces the full pass to the last bit; BLAS is ~2× faster, which the trained model's sweeps use.
    ordered_sums: bool = False


PRIMER_CONFIG = Config(vocab_size=20, d_model=6, n_heads=2, d_head=3, n_layers=2, d_ff=8)
HAND_CONFIG = Config(
    vocab_size=20,
    d_model=5,
    n_heads=1,
    d_head=5,
    n_layers=1,
    layer_norm=False,
    positions=False,
    biases=False,
    readout=False,
    ordered_sums=True,
)


def _frozen(array: np.ndarray) -> np.ndarray:
    out = np.array(array, dtype=np.float64)
    out.setflags(write=False)
    return out


def parameter_shapes(config: Config) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in the primer's order (the tied U = Eᵀ is not a separate parameter)."""
    d, hd, shapes = config.d_model, config.n_heads * config.d_head, {"E": (config.vocab_size, config.d_model)}
    for layer in range(config.n_layers):
        prefix = f"blocks.{layer}"
        if config.layer_norm:
            shapes |= {f"{prefix}.ln1.gamma": (d,), f"{prefix}.ln1.beta": (d,)}
        for name in ("Q", "K", "V"):
            shapes[f"{prefix}.attn.W_{name}"] = (d, hd)
            if config.biases:
                shapes[f"{prefix}.attn.b_{name}"] = (hd,)
        shapes[f"{prefix}.attn.W_O"] = (hd, d)
        if config.biases:
            shapes[f"{prefix}.attn.b_O"] = (d,)
        if config.d_ff:
            if config.layer_norm:
                shapes |= {f"{prefix}.ln2.gamma": (d,), f"{prefix}.ln2.beta": (d,)}
            shapes[f"{prefix}.mlp.W_1"] = (d, config.d_ff)
            if config.biases:
                shapes[f"{prefix}.mlp.b_1"] = (config.d_ff,)
            shapes[f"{prefix}.mlp.W_2"] = (config.d_ff, d)
            if config.biases:
                shapes[f"{prefix}.mlp.b_2"] = (d,)
    if config.readout and config.layer_norm:
        shapes |= {"ln_final.gamma": (d,), "ln_final.beta": (d,)}
    return shapes


@dataclass(frozen=True)
class Model:
    """A configuration, its read-only weights (shared by every session) and its vocabulary."""

    config: Config
    params: Mapping[str, np.ndarray]
    vocabulary: tuple[str, ...]
    prompt: tuple[str, ...] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = parameter_shapes(self.config)
        got = {name: tuple(np.shape(value)) for name, value in self.params.items()}
        if got != expected:
            missing, extra = expected.keys() - got.keys(), got.keys() - expected.keys()
            wrong = {n: (got[n], expected[n]) for n in expected.keys() & got.keys() if got[n] != expected[n]}
            raise ValueError(f"weights do not fit the config: missing {missing}, extra {extra}, shapes {wrong}")
        if len(self.vocabulary) != self.config.vocab_size:
            raise ValueError("vocabulary size does not match the config")
        object.__setattr__(self, "params", MappingProxyType({k: _frozen(v) for k, v in self.params.items()}))

    @property
    def n_params(self) -> int:
        """Number of learned numbers, counted from the weights (736 for the primer's §6 shape)."""
        return int(sum(np.size(value) for value in self.params.values()))

    @property
    def token_ids(self) -> list[int]:
        """The default prompt's ids."""
        return self.encode(self.prompt)

    def encode(self, words: Sequence[str]) -> list[int]:
        """Token ids for words; an unknown word raises ValueError naming the vocabulary."""
        unknown = [word for word in words if word not in self.vocabulary]
        if unknown:
            raise ValueError(
                f"unknown token(s) {', '.join(map(repr, unknown))}; the vocabulary is: " + " ".join(self.vocabulary)
            )
        return [self.vocabulary.index(word) for word in words]


@dataclass(frozen=True)
class Intervention:
    """What to switch off or replace during a forward pass; the weights themselves are never modified.

    attention: "on"; "off" sets W_O = 0 and b_O = 0 in every layer (primer Appendix A, Method 2);
    "deleted" removes the attention blocks (Method 1).
    zero_heads: heads whose rows of W_O are zeroed (b_O kept): single-head ablation.
    head_outputs: replacement values for a head's output z (broadcast to batch × T × d_head): mean ablation, patching.
    neurons: replacement MLP activations keyed (layer, neuron): 0 for zero ablation, a mean for mean ablation.
    """

    attention: AttentionMode = "on"
    zero_heads: frozenset[HeadKey] = frozenset()
    head_outputs: Mapping[HeadKey, np.ndarray | float] = field(default_factory=dict)
    neurons: Mapping[HeadKey, np.ndarray | float] = field(default_factory=dict)


NO_INTERVENTION = Intervention()


def sinusoidal_positions(T: int, d_model: int) -> np.ndarray:
    """Fixed positional encoding: column pair i holds sin and cos of p · 10000^(-2i/d_model) for position p."""
    positions = np.arange(T, dtype=np.float64)[:, None]
    frequencies = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    table = np.zeros((T, d_model))
    table[:, 0::2] = np.sin(positions * frequencies)
    table[:, 1::2] = np.cos(positions * frequencies)[:, : d_model // 2]
    return table


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Row-wise LayerNorm: γ ⊙ (x − μ) / √(σ² + ε) + β, biased variance as in torch."""
    average = np.full((x.shape[-1], 1), 1.0 / x.shape[-1])  # row means as a matmul: 3× faster than .mean on 6 columns
    centred = x - x @ average
    variance = (centred * centred) @ average
    variance += eps
    centred /= np.sqrt(variance, out=variance)  # in place from here: the same values, no temporaries
    centred *= gamma
    centred += beta
    return centred


_ERF_STEP, _ERF_END, _ERF_TERMS = 128, 6.0, 7  # grid 1/128 on [0, 6], Taylor terms per grid point


def _erf_taylor_table() -> np.ndarray:
    """Taylor coefficients erf⁽ᵏ⁾(x₀)/k! at every grid point x₀ (from math.erf and Hermite polynomials)."""
    table = np.empty((int(_ERF_END * _ERF_STEP) + 1, _ERF_TERMS))
    for i in range(table.shape[0]):
        x0 = i / _ERF_STEP
        hermite = [1.0, 2.0 * x0]  # physicists' H_k(x₀); erf⁽ᵏ⁺¹⁾(x) = 2/√π · (−1)ᵏ H_k(x) e^(−x²)
        for k in range(1, _ERF_TERMS):
            hermite.append(2.0 * x0 * hermite[k] - 2.0 * k * hermite[k - 1])
        gauss = 2.0 / math.sqrt(math.pi) * math.exp(-x0 * x0)
        table[i, 0] = math.erf(x0)
        for k in range(1, _ERF_TERMS):
            table[i, k] = (-1) ** (k - 1) * hermite[k - 1] * gauss / math.factorial(k)
    return table


_ERF_TABLE_T = np.ascontiguousarray(_erf_taylor_table().T)


def erf(x: np.ndarray) -> np.ndarray:
    """Vectorised error function, accurate to about 1e-16: a degree-6 Taylor step from the nearest point of a 1/128
    grid (truncation error below 1e-18, |step| ≤ 1/256). Beyond 6, erf is ±1 in float64, which is the table's last
    entry, so clamping |x| to 6 is exact."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x.ravel())  # one flat array even for a scalar, so every step below can work in place
    index = np.fmin(a, _ERF_END)  # NaN reads the table's last row; its step below keeps it NaN
    index *= _ERF_STEP
    index = np.rint(index, out=index).astype(np.intp)
    step = np.minimum(a, _ERF_END, out=a)
    step -= index * (1.0 / _ERF_STEP)
    result = _ERF_TABLE_T[-1].take(index, mode="clip")  # one term at a time: a gather from a contiguous row is cheap
    for k in range(_ERF_TERMS - 2, -1, -1):
        result *= step
        result += _ERF_TABLE_T[k].take(index, mode="clip")  # every index lies in the table: no bounds check
    return np.copysign(result, x.ravel(), out=result).reshape(x.shape)[()]


def gelu(z: np.ndarray) -> np.ndarray:
    """Exact GELU, z · Φ(z) with the error function (not the tanh approximation)."""
    result = erf(z / math.sqrt(2.0))
    result += 1.0
    result *= z
    result *= 0.5  # exact (a power of two): the same value as 0.5 · z · (1 + erf), with no temporaries
    return result


def forward(
    model: Model,
    ids: Sequence[int] | np.ndarray | None = None,
    *,
    embeddings: np.ndarray | None = None,
    lengths: Sequence[int] | None = None,
    intervention: Intervention = NO_INTERVENTION,
    scale: bool = True,
    causal: bool = True,
) -> Trace:
    """Run the model and return every intermediate as a read-only trace.

    ids: (T,) or (batch, T) token ids, right-padded when batched; `lengths` marks the real length of each row so no
    query reads a padded key. `embeddings` (T × d_model or batch × T × d_model) replaces the embedding look-up
    (the walkthrough's what-if editor). `scale` and `causal` switch off ÷√d_k and the causal mask.
    Arrays keep TransformerLens layouts: hook_q (batch, T, head, d_head), hook_pattern (batch, head, query, key);
    a 1-D input drops the batch axis everywhere.
    """
    config, p = model.config, model.params
    x = _embed(model, ids, embeddings)
    single = x.ndim == 2
    if single:
        x = x[None]
    batch, T, _ = x.shape
    padding = _padding(lengths, batch, T)
    trace: dict[str, np.ndarray] = {"hook_embed": x}
    resid = x
    if config.positions:
        trace["hook_pos_embed"] = sinusoidal_positions(T, config.d_model)
        resid = x + trace["hook_pos_embed"]
    for layer in range(config.n_layers):
        prefix = f"blocks.{layer}"
        trace[f"{prefix}.hook_resid_pre"] = resid
        if intervention.attention != "deleted":
            resid = resid + _attention_block(model, layer, resid, padding, intervention, scale, causal, trace)
        trace[f"{prefix}.hook_resid_mid"] = resid
        if config.d_ff:
            normed = _norm(model, f"{prefix}.ln2", resid, trace)
            pre = normed @ p[f"{prefix}.mlp.W_1"] + _bias(model, f"{prefix}.mlp.b_1")
            post = gelu(pre)
            for (neuron_layer, neuron), value in intervention.neurons.items():
                if neuron_layer == layer:
                    post[..., neuron] = value
            trace[f"{prefix}.mlp.hook_pre"], trace[f"{prefix}.mlp.hook_post"] = pre, post
            trace[f"{prefix}.hook_mlp_out"] = post @ p[f"{prefix}.mlp.W_2"] + _bias(model, f"{prefix}.mlp.b_2")
            resid = resid + trace[f"{prefix}.hook_mlp_out"]
        trace[f"{prefix}.hook_resid_post"] = resid
    if config.readout:
        final = _norm(model, "ln_final", resid, trace)
        trace["hook_logits"] = final @ p["E"].T
        trace["hook_probs"] = softmax(trace["hook_logits"], axis=-1)
    return _seal(trace, single)


def forward_ablations(
    model: Model,
    ids: np.ndarray,
    lengths: Sequence[int],
    interventions: Sequence[Intervention],
    at: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Several head ablations of one batch in one stacked pass: logits (configurations, batch, T, V), or
    (configurations, distinct rows, V) for the (sentence, position) rows `at` with `row` giving each of them its
    distinct row (rows with the same prefix share one), and every layer's attention pattern once per
    distinct history (histories, batch, head, query, key) with `…attn.history` naming each configuration's row of it:
    the values `forward` gives for each, to rounding.

    Only `zero_heads` and `attention="off"` are accepted (the ablation sweep's interventions). Configurations that
    ablate the same heads up to a layer share that layer's work: the first layer's attention runs once, and each
    later step runs once per distinct history, all of them stacked on a leading axis (one array operation, not one
    per configuration). Rows with the same tokens up to their position are carried once (causal attention gives
    them the same values), and after the last attention only the rows `at`, the MLP being position-wise.
    """
    if any(i.attention == "deleted" or i.head_outputs or i.neurons for i in interventions):
        raise ValueError("forward_ablations takes only zero_heads and attention='off' interventions")
    config, p = model.config, model.params
    (batch, T), h, d_head, d_model = np.shape(ids), config.n_heads, config.d_head, config.d_model
    padding = _padding(lengths, batch, T)
    allowed = causal_mask(T)[None, None]  # (batch, head, query, key), the same for every history
    if padding is not None:
        allowed = allowed & ~padding[:, None, None, :] | np.eye(T, dtype=bool)  # as `attend` masks padded keys
    resid = _embed(model, ids, None)[None]  # (histories, batch, T, d_model): one history before the first layer
    if config.positions:
        resid = resid + sinusoidal_positions(T, d_model)
    # Rows with the same tokens up to their position hold the same values at every layer (causal attention): all
    # but attention itself runs once per distinct prefix, on (histories, distinct rows, d_model).
    codes = _prefix_codes(np.asarray(ids), config.vocab_size).ravel()
    _, first, spread = np.unique(codes, return_index=True, return_inverse=True)
    spread = spread.ravel()
    resid = resid.reshape(1, batch * T, d_model)[:, first]
    if at is not None:  # after the last attention, only the distinct rows of `at` are carried on
        kept, row = np.unique(spread[np.asarray(at[0]) * T + np.asarray(at[1])], return_inverse=True)
    history = [()] * len(interventions)  # each configuration's interventions so far, one entry per layer
    out: dict[str, np.ndarray] = {}
    for layer in range(config.n_layers):
        prefix, last = f"blocks.{layer}", layer == config.n_layers - 1
        before = list(dict.fromkeys(history))
        normed = _norm(model, f"{prefix}.ln1", resid, {})
        W = np.concatenate([p[f"{prefix}.attn.W_{name}"] for name in "QKV"], axis=1)
        b = np.concatenate([p[f"{prefix}.attn.b_{name}"] for name in "QKV"]) if config.biases else 0.0
        # (histories, batch, head, T, d_head) for q, k and v; then `attend`'s steps, in place on one array.
        projected = (normed @ W + b)[:, spread]
        q, k, v = np.moveaxis(projected.reshape(len(before), batch, T, 3, h, d_head), (3, 4), (0, 3))
        pattern = q @ np.swapaxes(k, -1, -2)
        np.divide(pattern, np.sqrt(d_head), out=pattern)
        np.copyto(pattern, -np.inf, where=~allowed)
        pattern -= pattern.max(axis=-1, keepdims=True)
        np.exp(pattern, out=pattern)
        pattern /= pattern.sum(axis=-1, keepdims=True)
        out[f"{prefix}.attn.hook_pattern"] = pattern
        out[f"{prefix}.attn.history"] = np.array([before.index(k) for k in history])
        concat = np.swapaxes(pattern @ v, 2, 3).reshape(len(before), batch * T, h * d_head)[:, first]
        if last and at is not None:
            concat, resid = concat[:, kept], resid[:, kept]
        history = [(*k, _layer_ablation(i, layer)) for k, i in zip(history, interventions, strict=True)]
        after = list(dict.fromkeys(history))
        parents = [before.index(k[:-1]) for k in after]
        W_O, b_O = p[f"{prefix}.attn.W_O"], _bias(model, f"{prefix}.attn.b_O")
        W_Os = np.stack([_ablated_W_O(W_O, k[-1], d_head) for k in after])
        b_Os = np.stack([np.zeros_like(b_O) if k[-1] == "off" else b_O for k in after])
        shape = concat.shape[1:-1]
        attn_out = (concat[parents].reshape(len(after), -1, h * d_head) @ W_Os + b_Os[:, None, :]).reshape(
            len(after), *shape, d_model
        )
        resid = resid[parents] + attn_out
        if config.d_ff:
            normed = _norm(model, f"{prefix}.ln2", resid, {})
            post = gelu(normed @ p[f"{prefix}.mlp.W_1"] + _bias(model, f"{prefix}.mlp.b_1"))
            resid = resid + (post @ p[f"{prefix}.mlp.W_2"] + _bias(model, f"{prefix}.mlp.b_2"))
    if config.readout:
        logits = _norm(model, "ln_final", resid, {}) @ p["E"].T
        order = [after.index(k) for k in history]
        logits = logits if order == list(range(len(after))) else logits[order]
        if at is None:
            out["hook_logits"] = logits[:, spread].reshape(len(history), batch, T, -1)
        else:
            out["hook_logits"], out["row"] = logits, row.ravel()  # each row of `at`: its row of hook_logits
    return out


def _prefix_codes(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """(batch, T) integers, equal exactly where two rows hold the same tokens up to the same position (one small
    sort a step; each position's codes follow the previous position's, so no two positions share one)."""
    codes = np.empty(ids.shape, dtype=np.int64)
    codes[:, 0] = ids[:, 0]
    for position in range(1, ids.shape[1]):
        distinct = np.unique(codes[:, position - 1] * vocab_size + ids[:, position], return_inverse=True)[1]
        codes[:, position] = codes[:, position - 1].max() + 1 + distinct.ravel()
    return codes


def _layer_ablation(intervention: Intervention, layer: int) -> str | frozenset[int]:
    """What an intervention does to one layer's write-back: 'off', or the heads whose rows of W_O are zeroed."""
    if intervention.attention == "off":
        return "off"
    return frozenset(head for head_layer, head in intervention.zero_heads if head_layer == layer)


def _ablated_W_O(W_O: np.ndarray, ablation: str | frozenset[int], d_head: int) -> np.ndarray:
    """W_O as `forward` uses it under one layer's ablation: zero for attention off, else the heads' rows zeroed."""
    return np.zeros_like(W_O) if ablation == "off" else zero_head_rows(W_O, sorted(ablation), d_head)


def _embed(model: Model, ids: object, embeddings: np.ndarray | None) -> np.ndarray:
    if embeddings is not None:
        x = np.array(embeddings, dtype=np.float64)
        if x.ndim not in (2, 3) or x.shape[-1] != model.config.d_model:
            raise ValueError(f"embeddings must be T × {model.config.d_model}")
        return x
    index = np.asarray(ids)
    if index.ndim not in (1, 2) or index.shape[-1] == 0 or not np.issubdtype(index.dtype, np.integer):
        raise ValueError("ids must be a non-empty sequence (or batch of sequences) of integer token ids")
    if index.min() < 0 or index.max() >= model.config.vocab_size:
        raise ValueError(f"token ids must lie in [0, {model.config.vocab_size})")
    x = model.params["E"][index]
    if np.isnan(x).any():
        missing = sorted({model.vocabulary[i] for i in index.ravel() if np.isnan(model.params["E"][i]).any()})
        raise ValueError(f"no embedding row is known for {', '.join(missing)}")
    return x


def _padding(lengths: Sequence[int] | None, batch: int, T: int) -> np.ndarray | None:
    if lengths is None:
        return None
    lengths = np.asarray(lengths)
    if lengths.shape != (batch,) or lengths.min() < 1 or lengths.max() > T:
        raise ValueError("lengths must give each row's real length, between 1 and T")
    return np.arange(T)[None, :] >= lengths[:, None]


def _bias(model: Model, name: str) -> np.ndarray | float:
    return model.params[name] if model.config.biases else 0.0


def _norm(model: Model, name: str, x: np.ndarray, trace: dict[str, np.ndarray]) -> np.ndarray:
    if not model.config.layer_norm:
        return x
    trace[f"{name}.hook_normalized"] = layer_norm(
        x, model.params[f"{name}.gamma"], model.params[f"{name}.beta"], model.config.ln_eps
    )
    return trace[f"{name}.hook_normalized"]


def _attention_block(
    model: Model,
    layer: int,
    resid: np.ndarray,
    padding: np.ndarray | None,
    intervention: Intervention,
    scale: bool,
    causal: bool,
    trace: dict[str, np.ndarray],
) -> np.ndarray:
    """LN₁, Q/K/V split into heads, attention per head, concat, W_O write-back; returns the write-back."""
    config, p, prefix = model.config, model.params, f"blocks.{layer}"
    batch, T, _ = resid.shape
    h, d_head = config.n_heads, config.d_head
    normed = _norm(model, f"{prefix}.ln1", resid, trace)
    # One projection for Q, K and V side by side (one fixed-order product instead of three), then split.
    W = np.concatenate([p[f"{prefix}.attn.W_{name}"] for name in "QKV"], axis=1)
    b = np.concatenate([p[f"{prefix}.attn.b_{name}"] for name in "QKV"]) if config.biases else 0.0
    projected = np.split(product_for(config.ordered_sums)(normed, W) + b, 3, axis=-1)
    heads = {}
    for name, block in zip(("q", "k", "v"), projected, strict=True):
        heads[name] = block.reshape(batch, T, h, d_head)
        trace[f"{prefix}.attn.hook_{name}"] = heads[name]
    lanes = {name: np.swapaxes(value, 1, 2) for name, value in heads.items()}  # batch, head, T, d_head
    steps = attend(
        lanes["q"],
        lanes["k"],
        lanes["v"],
        scale=scale,
        causal=causal,
        key_padding=None if padding is None else padding[:, None, :],
        ordered=config.ordered_sums,
    )
    for step in ("attn_scores_raw", "attn_scores", "attn_scores_masked", "pattern"):
        trace[f"{prefix}.attn.hook_{step}"] = steps[step]
    z = np.swapaxes(steps["z"], 1, 2).copy()  # batch, T, head, d_head
    for (head_layer, head), value in intervention.head_outputs.items():
        if head_layer == layer:
            z[:, :, head, :] = value
    trace[f"{prefix}.attn.hook_z"] = z
    concat = z.reshape(batch, T, h * d_head)
    trace[f"{prefix}.attn.hook_concat"] = concat
    W_O, b_O = p[f"{prefix}.attn.W_O"], _bias(model, f"{prefix}.attn.b_O")
    if intervention.attention == "off":
        W_O, b_O = np.zeros_like(W_O), np.zeros_like(b_O)
    elif any(head_layer == layer for head_layer, _ in intervention.zero_heads):
        W_O = zero_head_rows(W_O, [head for head_layer, head in intervention.zero_heads if head_layer == layer], d_head)
    trace[f"{prefix}.hook_attn_out"] = product_for(config.ordered_sums)(concat, W_O) + b_O
    return trace[f"{prefix}.hook_attn_out"]


def logit_lens(model: Model, trace: Trace) -> dict[str, np.ndarray]:
    """The read-out (final LN, then U = Eᵀ) applied to the residual stream before the first block and after every
    attention and MLP block, keyed by hook name; the last entry is the model's own logits."""
    if not (model.config.readout and model.config.layer_norm):
        raise ValueError("the logit lens needs a model with a final LayerNorm and a read-out")
    names = ["blocks.0.hook_resid_pre"]
    for layer in range(model.config.n_layers):
        names += [f"blocks.{layer}.hook_resid_mid", f"blocks.{layer}.hook_resid_post"]
    lens = {}
    for name in names:
        normed = layer_norm(
            trace[name], model.params["ln_final.gamma"], model.params["ln_final.beta"], model.config.ln_eps
        )
        lens[name] = normed @ model.params["E"].T
        lens[name].setflags(write=False)
    return lens


def zero_head_rows(W_O: np.ndarray, heads: Sequence[int], d_head: int) -> np.ndarray:
    """A copy of W_O with the rows owned by the given heads set to 0 (head j owns rows j·d_v … (j+1)·d_v)."""
    out = np.array(W_O, dtype=np.float64)
    for head in heads:
        out[head * d_head : (head + 1) * d_head, :] = 0.0
    return out


def _seal(trace: dict[str, np.ndarray], single: bool) -> Trace:
    """Read-only views of the pass's own fresh arrays (no copies: nothing else holds a writable reference)."""
    sealed = {}
    for name, value in trace.items():
        array = (value[0] if single and name != "hook_pos_embed" else value).view()
        array.setflags(write=False)
        sealed[name] = array
    return MappingProxyType(sealed)


def random_model(config: Config, seed: int = 0, vocabulary: Sequence[str] | None = None) -> Model:
    """A model with random weights (for tests and the torch reference): normal weights, LN γ near 1."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith(".gamma"):
            params[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        else:
            params[name] = rng.standard_normal(shape) * (0.5 if name.startswith("E") else 0.4)
    words = tuple(vocabulary) if vocabulary else tuple(f"t{i}" for i in range(config.vocab_size))
    return Model(config=config, params=params, vocabulary=words)


@cache
def hand_model() -> Model:
    """The primer's §5 example: 1 layer, 1 head, d_model 5, no LN, no positions, no MLP, W_O = I.

    Only the embedding rows the primer prints (the, cat, sat) are known; the others are NaN and refused by forward.
    """
    example = hand_example()
    E = np.full((HAND_CONFIG.vocab_size, HAND_CONFIG.d_model), np.nan)
    for token, row in example.embedding_rows.items():
        E[example.vocabulary.index(token)] = row
    params = {
        "E": E,
        "blocks.0.attn.W_Q": example.W_Q,
        "blocks.0.attn.W_K": example.W_K,
        "blocks.0.attn.W_V": example.W_V,
        "blocks.0.attn.W_O": example.W_O,
    }
    return Model(
        config=HAND_CONFIG,
        params=params,
        vocabulary=example.vocabulary,
        prompt=example.prompt,
        metadata={"source": "primer §5"},
    )
