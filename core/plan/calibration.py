"""The serving-time model against published measurements: predicted vs measured per point, the median errors, the
MFU/MBU fit, and engines' logged KV-cache capacities reproduced with the memory budget rules.

Points live in assets/serving_measurements.json, each with the source a reader can follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache, lru_cache

import numpy as np

from core.plan import engines
from core.plan import kv_cache as kv
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.model_config import ModelConfig, parse_config_dict, presets

THROUGHPUT = ("throughput",)
LATENCY = ("latency", "ttft", "speed")
UNITS = {"throughput": "output tokens/s", "latency": "s per batch", "ttft": "s to first token", "speed": "tokens/s"}
BOUNDS = {"mfu": (0.10, 0.80), "mbu": (0.30, 0.90), "overhead_us": (0.0, 200.0)}  # plausible ranges the fit searches


@dataclass(frozen=True)
class Point:
    """One published measurement: the setup, what was measured (`kind`), the value and its source."""

    id: str
    kind: str
    model: str
    engine: str
    engine_version: str
    gpu: str
    tp: int
    batch: int
    input: int
    output: int
    weights: str
    weight_bits: int
    kv_dtype: str
    measured: float
    published: str
    source: str
    where: str

    @property
    def metric(self) -> str:
        """'throughput' or 'latency': which median the point counts towards."""
        return "throughput" if self.kind in THROUGHPUT else "latency"


@cache
def _asset() -> dict:
    return sv._asset("serving_measurements.json")


@lru_cache(maxsize=32)  # 32 × ~1 kB: the calibration's own models
def model(model_id: str) -> ModelConfig:
    """A model by preset id, or from the measurements' own configs (models the calculator does not offer)."""
    if model_id in presets():
        return presets()[model_id]
    entry = _asset()["models"][model_id]
    report = parse_config_dict(entry["config"], name=entry["name"], architecture=entry["architecture"])
    if report.config is None:
        raise ValueError(f"{model_id}: {report.errors}")
    return report.config


@cache
def points() -> tuple[Point, ...]:
    """Every published serving measurement."""
    return tuple(Point(**entry) for entry in _asset()["points"])


def model_sources() -> dict[str, str]:
    """Where the configs of the measured models the calculator does not offer come from."""
    return {entry["name"]: entry["source"] for entry in _asset()["models"].values()}


def setup_of(point: Point, eff: sv.Efficiency) -> sv.Setup:
    """The point's model copy for the time model, its decode reading the KV cache as the point's engine version does
    (TensorRT-LLM before 0.8: once per query head, core.plan.engines)."""
    config = model(point.model)
    passes = engines.by_name(point.engine).kv_passes(point.engine_version, config)
    return sv.Setup(config, kv.gpus()[point.gpu], point.tp, point.weight_bits, point.kv_dtype, eff, passes)


def predict(point: Point, eff: sv.Efficiency) -> float:
    """The time model's value for a point's setup, in the point's unit."""
    s = setup_of(point, eff)
    if point.kind == "throughput":
        return point.batch * point.output / sv.generation_seconds(s, point.batch, point.input, point.output)
    if point.kind == "latency":
        return sv.generation_seconds(s, point.batch, point.input, point.output)
    if point.kind == "ttft":
        return float(sv.prefill_seconds(s, point.input)[()])
    steps = sv.decode_step(s, point.batch, point.input + np.arange(1, point.output)).seconds
    return float(1.0 / steps.mean())  # 'speed': tokens/s one user sees while decoding


def errors(eff: sv.Efficiency) -> np.ndarray:
    """Relative error (predicted − measured) / measured of every point."""
    return np.array([(predict(p, eff) - p.measured) / p.measured for p in points()])


def medians(errs: np.ndarray) -> tuple[float, float]:
    """Median |error| over the throughput points and over the latency points."""
    is_tput = np.array([p.metric == "throughput" for p in points()])
    return float(np.median(np.abs(errs[is_tput]))), float(np.median(np.abs(errs[~is_tput])))


def measured_faster(errs: np.ndarray) -> tuple[int, int]:
    """Throughput points where the servers measured faster than the model predicts, and the throughput points in all:
    why the model's speed is an estimate, not a bound."""
    is_tput = np.array([p.metric == "throughput" for p in points()])
    return int(np.sum(errs[is_tput] < 0)), int(is_tput.sum())


def _grid(name: str, centre: float | None, step: float, reach: int) -> np.ndarray:
    low, high = BOUNDS[name]
    if centre is None:
        return np.round(np.arange(low, high + step / 2, step), 4)
    values = centre + step * np.arange(-reach, reach + 1)
    return np.round(values[(values >= low - 1e-9) & (values <= high + 1e-9)], 4)


def _search(
    mfus: np.ndarray, mbus: np.ndarray, overheads: np.ndarray
) -> tuple[float, sv.Efficiency, tuple[float, float]]:
    best: tuple[float, sv.Efficiency, tuple[float, float]] | None = None
    links = sv.default_efficiency()  # the links' settings stay as documented; MFU, MBU and the per-layer cost move
    for mfu in mfus:
        for mbu in mbus:
            for overhead in overheads:
                eff = replace(links, mfu=float(mfu), mbu=float(mbu), layer_overhead_s=float(overhead) * 1e-6)
                pair = medians(errors(eff))
                score = max(pair) + 1e-3 * sum(pair)
                if best is None or score < best[0]:
                    best = (score, eff, pair)
    assert best is not None
    return best


def fit() -> tuple[sv.Efficiency, tuple[float, float]]:
    """One MFU, MBU and per-layer overhead for all points, within plausible bounds (`BOUNDS`), minimising the larger of
    the two median |errors|: a coarse grid (0.05, 0.05, 20 µs), then a fine one (0.01, 0.01, 5 µs) around its best."""
    _, coarse, _ = _search(_grid("mfu", None, 0.05, 0), _grid("mbu", None, 0.05, 0), _grid("overhead_us", None, 20, 0))
    _, eff, pair = _search(
        _grid("mfu", coarse.mfu, 0.01, 4),
        _grid("mbu", coarse.mbu, 0.01, 4),
        _grid("overhead_us", coarse.layer_overhead_s * 1e6, 5, 3),
    )
    return eff, pair


SHARES = np.round(np.arange(0.0, 1.0 + 1e-9, 0.05), 2)  # the re-read share's grid: from free (cache) to a full read


def fit_reread_share(eff: sv.Efficiency) -> float:
    """The cost of a per-query-head kernel's repeated KV reads (`Efficiency.reread_share`) at these efficiencies: the
    share on a 0.05 grid whose larger median error is smallest (the fit's score), ties broken by the smaller mean
    |error| over all points. It moves only points whose engine version ran such a kernel (core.plan.engines)."""
    best: tuple[tuple[float, float], float] | None = None
    for share in SHARES:
        errs = errors(replace(eff, reread_share=float(share)))
        pair = medians(errs)
        key = (round(max(pair) + 1e-3 * sum(pair), 12), float(np.mean(np.abs(errs))))
        if best is None or key < best[0]:
            best = (key, float(share))
    assert best is not None
    return best[1]


# --------------------------------------------------------------------------------------------------- KV capacity
@dataclass(frozen=True)
class Capacity:
    """An engine's logged KV-cache size in tokens beside the budget rule's prediction from the same logged inputs."""

    id: str
    engine: str
    model: str
    gpu_name: str
    tp: int
    logged: int
    predicted: int
    published: str
    source: str

    @property
    def error(self) -> float:
        """(predicted − logged) / logged."""
        return (self.predicted - self.logged) / self.logged


def _capacity(entry: dict) -> Capacity:
    """The engine's memory rule applied to what its log printed: the cache size itself, the memory free after the
    weights (TensorRT-LLM: fraction × free), or total, peak torch and non-torch memory (vLLM: fraction × total less
    both)."""
    config = model(entry["model"])
    engine = engines.profile(entry["engine_id"])
    per_token = kv.kv_bytes_per_token(config, entry["kv_dtype"], tp=entry["tp"])
    if "available_gib" in entry:  # the engine logged the memory it gave the cache
        budget = entry["available_gib"] * kv.GIB
    elif "free_gib" in entry:  # the memory free after weights and buffers, as logged
        budget = engines.kv_budget_bytes(engine, entry["free_gib"] * kv.GIB, 0.0, 0.0, tp=entry["tp"])
    else:  # total memory, weights + peak activations and non-torch memory, as logged
        used, other = entry["used_gib"] * kv.GIB, entry["non_torch_gib"] * kv.GIB
        budget = engines.kv_budget_bytes(engine, entry["total_gib"] * kv.GIB, used, other, tp=entry["tp"])
    block = entry["block"]
    tokens = int(budget // (per_token * block)) * block
    return Capacity(
        entry["id"],
        entry["engine"],
        config.name,
        entry["gpu_name"],
        entry["tp"],
        entry["logged_tokens"],
        tokens,
        entry["published"],
        entry["source"],
    )


@cache
def capacities() -> tuple[Capacity, ...]:
    """Every logged KV capacity with the budget rules' prediction."""
    return tuple(_capacity(entry) for entry in _asset()["kv_capacity"])


# --------------------------------------------------------------------------------------------------- under traffic
LOADED_IN_FLIGHT = 50  # a point is "under load" with at least this many requests in flight ...
LOADED_RATE = 16.0  # ... or at least this many requests per second


@dataclass(frozen=True)
class OnlinePoint:
    """One published measurement under traffic: the setup, the engine, the workload (`concurrency` in flight or a
    Poisson `rate`), the statistic published ('mean' or 'median') and the measured figures (None where not given)."""

    id: str
    engine: str
    engine_id: str
    engine_version: str
    model: str
    gpu: str
    tp: int
    weights: str
    weight_bits: int
    kv_dtype: str
    input: int
    output: int
    concurrency: int | None
    rate: float | None
    requests: int
    statistic: str
    ttft_s: float
    itl_s: float
    output_tokens_per_s: float | None
    published: str
    source: str
    where: str

    @property
    def loaded(self) -> bool:
        """At least 50 requests in flight or 16 requests per second: where queueing and batching shape latency."""
        return (self.concurrency or 0) >= LOADED_IN_FLIGHT or (self.rate or 0.0) >= LOADED_RATE

    def traffic(self) -> sim.Traffic:
        """The workload as the simulator runs it."""
        if self.concurrency:
            return sim.Traffic("closed", self.requests, self.input, self.output, concurrency=self.concurrency)
        return sim.Traffic("poisson", self.requests, self.input, self.output, rate=float(self.rate or 0.0), seed=0)


@cache
def online_points() -> tuple[OnlinePoint, ...]:
    """Every published measurement under traffic."""
    return tuple(OnlinePoint(**entry) for entry in _asset().get("online", ()))


WARM_UP = (
    "A run that holds a fixed number of requests in flight sends them all together when it opens, a burst steady "
    "traffic never sees; Llama-3.3-70B's published first token at 50 in flight is well below what counting that "
    "burst gives, so such runs are compared in their steady state, the opening requests left out as a warm-up."
)  # 0.83 s published; 0.96 s simulated in the steady state, 2.0 s with the burst counted over its 500 requests


@dataclass(frozen=True)
class OnlinePrediction:
    """The simulator's figures for an online point, in the point's statistic."""

    ttft_s: float
    itl_s: float
    output_tokens_per_s: float


def predict_online(point: OnlinePoint, eff: sv.Efficiency) -> OnlinePrediction:
    """Simulate the point's workload on its setup under its engine's defaults."""
    engine, config = engines.profile(point.engine_id), model(point.model)
    passes = engine.kv_passes(point.engine_version, config)
    setup = sv.Setup(config, kv.gpus()[point.gpu], point.tp, point.weight_bits, point.kv_dtype, eff, passes)
    result = sim.simulate(setup, point.traffic(), sim.engine_limits(setup, engine))
    figures = result.summary(skip=point.concurrency or 0)  # a closed loop in its steady state: see WARM_UP
    key = "mean" if point.statistic == "mean" else "p50"
    return OnlinePrediction(figures[f"ttft_{key}_s"], figures[f"itl_{key}_s"], figures["output_tokens_per_s"])


def online_errors(eff: sv.Efficiency) -> list[tuple[OnlinePoint, OnlinePrediction, dict[str, float]]]:
    """Each online point with the simulator's figures and the relative errors of what was published."""
    rows = []
    for point in online_points():
        got = predict_online(point, eff)
        errs = {"ttft": (got.ttft_s - point.ttft_s) / point.ttft_s, "itl": (got.itl_s - point.itl_s) / point.itl_s}
        if point.output_tokens_per_s:
            errs["throughput"] = (got.output_tokens_per_s - point.output_tokens_per_s) / point.output_tokens_per_s
        rows.append((point, got, errs))
    return rows


def loaded_medians(rows: list[tuple[OnlinePoint, OnlinePrediction, dict[str, float]]]) -> tuple[float, float, int]:
    """Median |error| of the time to first token and of the inter-token latency over the runs under load (at least
    LOADED_IN_FLIGHT in flight or LOADED_RATE requests/s), and how many runs that is."""
    loaded = [errs for point, _, errs in rows if point.loaded]
    if not loaded:
        return math.nan, math.nan, 0
    ttft = float(np.median([abs(e["ttft"]) for e in loaded]))
    return ttft, float(np.median([abs(e["itl"]) for e in loaded])), len(loaded)
