"""Train the primer's 736-parameter Transformer on the toy world with torch (the ONLY module that imports torch).

`python -m core.training` retrains the shipped model (keeping its replay checkpoints, assets/model/checkpoints.json)
and the seeded family on CPU in float64 with fixed seeds (deterministic: one thread, deterministic algorithms) and
rewrites assets/model/; `--discarded-world` trains the primer's discarded second rule instead
(core.explain.discarded_world). The torch module here is also the independent reference the numpy engine is tested
against: it uses torch's own layer_norm, gelu (erf) and scaled_dot_product_attention, and takes the same
`Intervention` the engine takes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from core.cli import OneLineParser, writable
from core.explain import checkpoints, discarded_world, weights
from core.explain.discarded_world import EARLY, RUNS, RunConfig, RunRow, discarded_corpus, evaluate
from core.explain.recipe import FAMILY_SEEDS, MAIN_SEED, RECIPE, Recipe
from core.explain.transformer import NO_INTERVENTION, PRIMER_CONFIG, Config, Intervention, Model, parameter_shapes
from core.explain.transformer import sinusoidal_positions as _positions
from core.explain.world import VOCABULARY, Corpus, corpus, corpus_hash, training_corpus

DTYPE = torch.float64


class TorchTransformer(torch.nn.Module):
    """The engine's architecture in torch: pre-LN, sinusoidal positions, erf-GELU, biases, tied U = Eᵀ."""

    def __init__(self, config: Config, params: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.config = config
        self.names = list(parameter_shapes(config))
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.tensor(np.asarray(params[name]), dtype=DTYPE)) for name in self.names]
        )
        self.index = {name: i for i, name in enumerate(self.names)}

    def p(self, name: str) -> torch.Tensor:
        """The parameter with the engine's name."""
        return self.weights[self.index[name]]

    def numpy_params(self) -> dict[str, np.ndarray]:
        """The weights as float64 numpy arrays under the engine's names."""
        return {name: self.p(name).detach().numpy().copy() for name in self.names}

    def forward(self, ids: torch.Tensor, intervention: Intervention = NO_INTERVENTION) -> torch.Tensor:
        """Logits (batch, T, V) for right-padded ids (batch, T); padding is harmless under the causal mask."""
        c = self.config
        T = ids.shape[1]
        resid = self.p("E")[ids]
        if c.positions:
            resid = resid + torch.tensor(_positions(T, c.d_model), dtype=DTYPE)
        for layer in range(c.n_layers):
            prefix = f"blocks.{layer}"
            if intervention.attention != "deleted":
                resid = resid + self._attention(layer, resid, intervention)
            if c.d_ff:
                normed = self._norm(f"{prefix}.ln2", resid)
                post = F.gelu(normed @ self.p(f"{prefix}.mlp.W_1") + self._bias(f"{prefix}.mlp.b_1"))
                for (neuron_layer, neuron), value in intervention.neurons.items():
                    if neuron_layer == layer:
                        post = post.clone()
                        post[..., neuron] = torch.tensor(np.asarray(value, dtype=np.float64))
                resid = resid + post @ self.p(f"{prefix}.mlp.W_2") + self._bias(f"{prefix}.mlp.b_2")
        return self._norm("ln_final", resid) @ self.p("E").T

    def _bias(self, name: str) -> torch.Tensor | float:
        return self.p(name) if self.config.biases else 0.0

    def _norm(self, name: str, x: torch.Tensor) -> torch.Tensor:
        if not self.config.layer_norm:
            return x
        return F.layer_norm(
            x, (self.config.d_model,), self.p(f"{name}.gamma"), self.p(f"{name}.beta"), self.config.ln_eps
        )

    def _attention(self, layer: int, resid: torch.Tensor, intervention: Intervention) -> torch.Tensor:
        c, prefix = self.config, f"blocks.{layer}"
        batch, T, _ = resid.shape
        normed = self._norm(f"{prefix}.ln1", resid)
        lanes = [
            (normed @ self.p(f"{prefix}.attn.W_{n}") + self._bias(f"{prefix}.attn.b_{n}"))
            .view(batch, T, c.n_heads, c.d_head)
            .transpose(1, 2)
            for n in "QKV"
        ]
        z = F.scaled_dot_product_attention(*lanes, is_causal=True).transpose(1, 2)  # batch, T, head, d_head
        if any(head_layer == layer for head_layer, _ in intervention.head_outputs):
            z = z.clone()
            for (head_layer, head), value in intervention.head_outputs.items():
                if head_layer == layer:
                    z[:, :, head, :] = torch.tensor(np.asarray(value, dtype=np.float64))
        W_O, b_O = self.p(f"{prefix}.attn.W_O"), self._bias(f"{prefix}.attn.b_O")
        if intervention.attention == "off":
            W_O, b_O = torch.zeros_like(W_O), torch.zeros_like(b_O)
        else:
            rows = torch.ones(c.n_heads * c.d_head, 1, dtype=DTYPE)
            for head_layer, head in intervention.zero_heads:
                if head_layer == layer:
                    rows[head * c.d_head : (head + 1) * c.d_head] = 0.0
            if (rows == 0).any():
                W_O = W_O * rows
        return z.reshape(batch, T, c.n_heads * c.d_head) @ W_O + b_O


def torch_model(model: Model) -> TorchTransformer:
    """The torch twin of an engine model (same weights, bit for bit)."""
    return TorchTransformer(model.config, dict(model.params))


def _initial_params(config: Config, seed: int, std: float) -> dict[str, np.ndarray]:
    generator = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in parameter_shapes(config).items():
        if name.endswith(".gamma"):
            params[name] = np.ones(shape)
        elif name.endswith((".beta",)) or ".b_" in name:
            params[name] = np.zeros(shape)
        else:
            fan_in = shape[0] if name != "E" else config.d_model
            scale = std if name == "E" else 1.0 / math.sqrt(fan_in)
            params[name] = (torch.randn(shape, generator=generator, dtype=DTYPE) * scale).numpy()
    return params


def _slot_tensors(data: Corpus) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (
        torch.tensor(data.ids),
        torch.tensor(data.slot_sentence),
        torch.tensor(data.slot_position),
        torch.tensor(data.slot_target),
    )


def _metrics(module: TorchTransformer, data: Corpus) -> dict[str, float]:
    """Rule accuracy on the held-out copula slots, class accuracy on all copula slots, bigram top-1."""
    with torch.no_grad():
        logits = module(torch.tensor(data.ids))[torch.tensor(data.slot_sentence), torch.tensor(data.slot_position)]
    top = logits.argmax(-1).numpy()
    right_class = (top[:, None] == data.slot_class).any(axis=1)
    held = data.slot_copula & data.slot_held_out
    bigram = ~data.slot_copula
    return {
        "rule_accuracy_held_out": float(right_class[held].mean()),
        "copula_class_accuracy": float(right_class[data.slot_copula].mean()),
        "bigram_top1": float((top[bigram] == data.slot_target[bigram]).mean()),
    }


@dataclass(frozen=True)
class TrainingRun:
    """One training run: the trained engine model, its log (every `log_every` steps) and the weights it had at each
    requested snapshot step (float64 copies, in step order)."""

    model: Model
    log: dict[str, list]
    snapshots: tuple[tuple[int, dict[str, np.ndarray]], ...]


def run_training(
    seed: int,
    recipe: Recipe = RECIPE,
    config: Config = PRIMER_CONFIG,
    *,
    data: Corpus | None = None,
    evaluate: Corpus | None = None,
    snapshots: Sequence[int] = (),
    on_step: Callable[[int, int], None] | None = None,
) -> TrainingRun:
    """Train one model with the recipe on `data` (default: the world's 56 training types), logging the metrics on
    `evaluate` (default: all 64 types) every `recipe.log_every` steps and keeping the weights at each step of
    `snapshots`; `on_step(step, steps)` is called after every step (a progress bar). Keeping snapshots and calling
    back read the weights only, so the trained weights are the same bit for bit with or without them."""
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    start = time.perf_counter()
    module = TorchTransformer(config, _initial_params(config, seed, recipe.init_std))
    ids, sentence, position, target = _slot_tensors(training_corpus() if data is None else data)
    optimiser = torch.optim.AdamW(module.parameters(), lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: (
            min(1.0, (step + 1) / recipe.warmup)
            * 0.5
            * (1.0 + math.cos(math.pi * min(step, recipe.steps) / recipe.steps))
        ),
    )
    log: dict[str, list] = {"step": [], "loss": [], "rule_accuracy_held_out": [], "copula_class_accuracy": []}
    log["bigram_top1"] = []
    full = corpus() if evaluate is None else evaluate
    keep, kept = set(snapshots), []
    for step in range(recipe.steps + 1):
        if step in keep:
            kept.append((step, module.numpy_params()))
        logits = module(ids)[sentence, position]
        loss = F.cross_entropy(logits, target)
        if step % recipe.log_every == 0 or step == recipe.steps:
            log["step"].append(step)
            log["loss"].append(float(loss.detach()))
            for key, value in _metrics(module, full).items():
                log[key].append(value)
        if step == recipe.steps:
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if on_step is not None:
            on_step(step + 1, recipe.steps)
    seconds = time.perf_counter() - start
    metadata = {
        "seed": seed,
        "steps": recipe.steps,
        "final_loss": log["loss"][-1],
        "corpus_hash": corpus_hash(),
        "training_seconds": round(seconds, 2),
        "threads": 1,
        "optimiser": f"AdamW(lr={recipe.learning_rate}, weight_decay={recipe.weight_decay}), "
        f"{recipe.warmup}-step linear warm-up then cosine decay to 0, full batch",
        "init": f"N(0, {recipe.init_std}) for E, N(0, 1/fan_in) for matrices, γ = 1, β = bias = 0",
        "loss": "mean cross-entropy over every next-token decision of the 56 training types",
        "torch": torch.__version__,
    }
    if data is not None:
        del metadata["corpus_hash"]  # the hash names the shipped world's training types
        metadata["loss"] = f"mean cross-entropy over every next-token decision of the {len(data.types)} training types"
    model = Model(
        config=config,
        params=module.numpy_params(),
        vocabulary=VOCABULARY,
        prompt=("<BOS>", "the", "cat", "sat"),
        metadata=metadata,
    )
    return TrainingRun(model=model, log=log, snapshots=tuple(kept))


def train(seed: int, recipe: Recipe = RECIPE, config: Config = PRIMER_CONFIG) -> tuple[Model, dict]:
    """Train one model on the training types; returns the engine model and its training log."""
    run = run_training(seed, recipe, config)
    return run.model, run.log


def train_discarded(run: RunConfig, steps: int = RECIPE.steps, early: int | None = None) -> list[tuple[int, Model]]:
    """Train one configuration on the discarded world's training types (core.explain.discarded_world); returns the
    final model and, when `early` is given, the model at that step first (as (step, model) pairs)."""
    recipe = Recipe(steps=steps, learning_rate=run.learning_rate, log_every=steps)
    result = run_training(
        run.seed,
        recipe,
        run.config,
        data=discarded_corpus(held_out=False),
        evaluate=discarded_corpus(),
        snapshots=() if early is None else (early,),
    )
    final = result.model
    kept = [(step, Model(run.config, w, VOCABULARY, final.prompt)) for step, w in result.snapshots if step != steps]
    return [*kept, (steps, final)]


def discarded_table(steps: int = RECIPE.steps) -> tuple[list[RunRow], list[Model]]:
    """Every run of the discarded world and its early checkpoint, scored by the engine, in the table's order (the
    early checkpoint right after its run)."""
    rows, models = [], []
    for run in RUNS:
        early = EARLY[1] if run.name == EARLY[0] and EARLY[1] < steps else None
        for step, model in reversed(train_discarded(run, steps, early)):
            name, label = (
                (run.name, run.label)
                if step == steps
                else (f"{run.name}, step {step}", f"run {run.name} after {step:,} of its {steps:,} steps")
            )
            rows.append(evaluate(model, name, label, step))
            models.append(model)
    return rows, models


def main(argv: Sequence[str] | None = None) -> None:
    """The retraining command: the shipped model, its replay checkpoints and the family; or the discarded world."""
    parser = OneLineParser(prog="python -m core.training", description=__doc__.splitlines()[0])
    parser.add_argument("--skip-family", action="store_true", help="retrain only the shipped model and its replay")
    parser.add_argument(
        "--discarded-world",
        action="store_true",
        help="train only the primer's discarded second rule (4 configurations + an early checkpoint) and write its "
        "table, assets/model/discarded_world.json",
    )
    parser.add_argument(
        "--out",
        type=writable(".json"),
        default=None,
        help="with --discarded-world: write the table here instead (checked before training starts)",
    )
    args = parser.parse_args(argv)
    if args.out is not None and not args.discarded_world:
        parser.error("argument --out: it is read only with --discarded-world")
    if args.discarded_world:
        rows, models = discarded_table()
        path = discarded_world.save(rows, models, RECIPE.steps, args.out or discarded_world.ASSET)
        for row in rows:
            print(
                f"{row.name:<12} {row.n_params:>6} params: class metric {row.class_metric:.3f}, repeat trained "
                f"{row.repeat_trained:.3f}, held out {row.repeat_held_out:.3f}"
            )
        print(f"-> {path}")
        return
    seeds = [MAIN_SEED] if args.skip_family else [MAIN_SEED, *FAMILY_SEEDS]
    for seed in seeds:
        run = run_training(seed, snapshots=checkpoints.checkpoint_steps(RECIPE.steps) if seed == MAIN_SEED else ())
        model, log = run.model, run.log
        path = weights.save(model, log, family=seed != MAIN_SEED)
        if seed == MAIN_SEED:
            replay = checkpoints.replay_from(run.snapshots, model, checkpoints.CHECKPOINTS.name)
            print(f"replay: {len(replay)} checkpoints -> {checkpoints.save(replay, seed, RECIPE.steps)}")
        print(
            f"seed {seed}: loss {model.metadata['final_loss']:.4f}, {model.metadata['training_seconds']} s, "
            f"held-out rule accuracy {log['rule_accuracy_held_out'][-1]:.2f} -> {path}"
        )


if __name__ == "__main__":
    main()
