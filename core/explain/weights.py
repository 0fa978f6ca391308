"""Load (and write) the trained models as documented, human-readable JSON: no pickle, primer symbols, x @ W.

assets/model/tiny_transformer.json is the shipped model; assets/model/family/seed_XX.json are independently seeded
models of the same shape trained on the same world; assets/model/logs/seed_XX.json hold their training logs.
docs/model.md explains how to read a file by hand.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, fields
from functools import cache
from pathlib import Path

import numpy as np

from core.assets import ASSETS
from core.explain.transformer import Config, Model, parameter_shapes

MODEL_DIR = ASSETS / "model"
MAIN = MODEL_DIR / "tiny_transformer.json"
FAMILY_DIR = MODEL_DIR / "family"
LOG_DIR = MODEL_DIR / "logs"
FORMAT = "tiny-transformer-weights/1"

CONVENTIONS = {
    "vectors": "row vectors: every projection is x @ W + b",
    "E": "V × d_model embedding; the unembedding is tied, U = Eᵀ, so logits = LN_final(h) @ Eᵀ",
    "W_Q, W_K, W_V": "d_model × (h·d_k); head j owns columns j·d_k … (j+1)·d_k − 1 (counted from 0)",
    "W_O": "(h·d_v) × d_model; head j owns rows j·d_v … (j+1)·d_v − 1",
    "W_1, W_2": "d_model × d_ff and d_ff × d_model; GELU(z) = z·Φ(z) (exact, erf) in between",
    "LayerNorm": "γ ⊙ (x − mean) / sqrt(var + eps) + β, biased variance, pre-LN (ln1 before attention, ln2 before "
    "the MLP, ln_final before the read-out)",
    "positions": "fixed sinusoids added to E rows: column pair i holds sin, cos of p·10000^(−2i/d_model), p from 0",
    "blocks.{l}": "layer l + 1 of the primer (blocks.0 is layer 1); heads are counted from 0 too",
}


def save(model: Model, log: Mapping[str, list], *, family: bool) -> Path:
    """Write a model (and its training log) as JSON; returns the model file's path."""
    seed = int(model.metadata["seed"])
    path = FAMILY_DIR / f"seed_{seed:02d}.json" if family else MAIN
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {
        "format": FORMAT,
        "about": "Weights of the primer's §6 Transformer trained on the toy world (core/explain/world.py). Every "
        "parameter is listed under its primer symbol, row by row, as float64 decimals that round-trip exactly. "
        "See docs/model.md.",
        "conventions": CONVENTIONS,
        "config": asdict(model.config),
        "n_params": model.n_params,
        "vocabulary": list(model.vocabulary),
        "prompt": list(model.prompt),
        "training": dict(model.metadata),
        "log": str(_log_path(seed).relative_to(MODEL_DIR)),
    }
    lines = json.dumps(header, indent=2, ensure_ascii=False)[:-2].splitlines()
    lines[-1] += ","
    lines.append('  "parameters": {')
    names = list(model.params)
    for i, name in enumerate(names):
        value = np.asarray(model.params[name])
        rows = value.tolist() if value.ndim == 2 else [value.tolist()]
        body = ",\n      ".join(json.dumps(row) for row in rows)
        opening, closing = ("[\n      ", "\n    ]") if value.ndim == 2 else ("", "")
        lines.append(f'    "{name}": {opening}{body}{closing}' + ("," if i < len(names) - 1 else ""))
    lines += ["  }", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _log_path(seed).parent.mkdir(parents=True, exist_ok=True)
    _log_path(seed).write_text(json.dumps({"seed": seed, **log}, indent=1) + "\n", encoding="utf-8")
    return path


def _log_path(seed: int) -> Path:
    return LOG_DIR / f"seed_{seed:02d}.json"


def load(path: Path | str) -> Model:
    """Read a model file; checks the format, the config and every parameter's shape."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    config = Config(**{f.name: doc["config"][f.name] for f in fields(Config)})
    expected = parameter_shapes(config)
    params = {name: np.array(doc["parameters"][name], dtype=np.float64).reshape(expected[name]) for name in expected}
    model = Model(
        config=config,
        params=params,
        vocabulary=tuple(doc["vocabulary"]),
        prompt=tuple(doc["prompt"]),
        metadata={**doc["training"], "log": doc["log"]},
    )
    if model.n_params != doc["n_params"]:
        raise ValueError(f"{path}: {model.n_params} parameters, the header says {doc['n_params']}")
    return model


@cache
def trained_model() -> Model:
    """The shipped model (primer §6 shape, 736 parameters)."""
    return load(MAIN)


@cache
def family() -> tuple[Model, ...]:
    """The independently seeded models, in seed order."""
    return tuple(load(path) for path in sorted(FAMILY_DIR.glob("seed_*.json")))


def training_log(model: Model) -> dict[str, list]:
    """A model's training log: step, loss, held-out rule accuracy, copula class accuracy, bigram top-1."""
    return json.loads((MODEL_DIR / str(model.metadata["log"])).read_text(encoding="utf-8"))
