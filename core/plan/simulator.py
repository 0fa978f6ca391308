"""A continuous-batching traffic simulator for one model copy: time to first token, every inter-token gap and the
end-to-end time of each request under a request rate, a fixed number in flight or an offline batch.

Three seams, as in Vidur: a request generator (Poisson arrivals at a rate, a closed loop holding C requests in flight,
or everything at t = 0) -> an engine scheduler (each step runs the decode tokens of the running requests, then prompt
chunks first come first served within the engine's token budget, admitting waiting requests while the batch cap and the
KV blocks allow, reserving what the engine reserves; when a growing request finds no free block, the newest running
request is preempted and later recomputed, as vLLM and SGLang do) -> a step-time predictor (core.plan.serving's model
of one mixed step). Deterministic for a seed. Stretches of pure decoding between events (an arrival the engine could
admit, a request finishing, a block shortage) are advanced in one vectorised move with the same per-step times.

What it does not model: prefix caching, speculative decoding, disaggregated prefill, sampling and detokenisation time.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from core.plan import serving as sv
from core.plan.engines import EngineProfile, kv_capacity_tokens
from core.plan.gaps import GapLog
from core.plan.stretch import Stretch

MODES = ("poisson", "closed", "offline")
MAX_REQUESTS = 100_000
MAX_EVENTS = 2_000_000  # the simulator's moves (mixed steps and stretches) in one run: about a minute of computing


@dataclass(frozen=True)
class Traffic:
    """The requests: how they arrive (`mode`: poisson at `rate` per second, closed with `concurrency` in flight,
    offline all at t = 0), how many, their prompt and answer lengths in tokens, and the random seed."""

    mode: str
    requests: int
    prompt: int
    output: int
    rate: float = 0.0
    concurrency: int = 0
    seed: int = 0


def traffic_problem(traffic: Traffic) -> str | None:
    """Why these requests cannot be simulated (the message names the field), or None."""
    if traffic.mode not in MODES:
        return f"mode: unknown arrival mode {traffic.mode!r}; choose one of {', '.join(MODES)}"
    if not 1 <= traffic.requests <= MAX_REQUESTS:
        return f"requests: must be between 1 and {MAX_REQUESTS:,}, not {traffic.requests:,}"
    if traffic.prompt < 1:
        return f"prompt: must be at least 1 token, not {traffic.prompt:,}"
    if traffic.output < 1:
        return f"output: must be at least 1 token, not {traffic.output:,}"
    if traffic.mode == "poisson" and not (math.isfinite(traffic.rate) and traffic.rate > 0):
        return f"qps: the request rate must be a finite number above 0, not {traffic.rate!r}"
    if traffic.mode == "poisson" and traffic.rate > 1e6:
        return f"qps: {traffic.rate:,g} requests per second is beyond any model copy; use at most 1,000,000"
    if traffic.mode == "closed" and traffic.concurrency < 1:
        return f"concurrency: must be at least 1 request in flight, not {traffic.concurrency:,}"
    return None


@dataclass(frozen=True)
class Limits:
    """What the engine allows one model copy: sequences per step, tokens per step, KV blocks and their size, the share
    of an answer reserved at admission and whether it preempts."""

    max_batch: int
    token_budget: int
    kv_blocks: int
    block: int
    reserve: float
    preempts: bool

    @property
    def kv_tokens(self) -> int:
        """Tokens the KV cache holds."""
        return self.kv_blocks * self.block


def engine_limits(s: sv.Setup, engine: EngineProfile) -> Limits:
    """The engine's defaults on this GPU and its KV capacity under the engine's memory rule."""
    max_batch, budget = engine.limits(s.gpu)
    tokens = kv_capacity_tokens(engine, s.config, s.gpu, s.tp, s.weight_bits, s.kv_dtype)
    return Limits(
        max_batch,
        budget,
        tokens // engine.block_tokens,
        engine.block_tokens,
        engine.admission_reserve,
        engine.preemption != "none",
    )


@dataclass(frozen=True)
class Result:
    """Per request: arrival, first token and finish times (NaN if unfinished); every inter-token gap (`gaps`, kept
    compactly: core.plan.gaps); over time (at each step or stretch): the time, requests waiting, running and KV blocks
    in use. `complete` is False when a cap stopped the run, `stopped_by` names the cap, `note` how far it got."""

    arrival: np.ndarray
    first: np.ndarray
    finish: np.ndarray
    gaps: GapLog
    output: int
    times: np.ndarray
    waiting: np.ndarray
    running: np.ndarray
    kv_blocks_used: np.ndarray
    limits: Limits
    steps: int
    complete: bool
    note: str
    stopped_by: str = ""  # "" (finished), "steps", "events", "time" or "empty" (nothing left that could run)

    @property
    def done(self) -> np.ndarray:
        """Which requests finished."""
        return np.isfinite(self.finish)

    def _kept(self, skip: int) -> np.ndarray:
        kept = self.done.copy()
        kept[:skip] = False
        return kept

    def ttft_of(self, skip: int = 0) -> np.ndarray:
        """Time to first token of each finished request, leaving out the first `skip` issued (a warm-up)."""
        kept = self._kept(skip)
        return (self.first - self.arrival)[kept]

    def itl_of(self, skip: int = 0) -> np.ndarray:
        """Every inter-token gap of the finished requests, leaving out the first `skip` issued, written out (for
        small runs; `summary` reads the compact record)."""
        return self.gaps.sample(self._kept(skip)).expand()

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token of each finished request."""
        return self.ttft_of()

    @property
    def itl(self) -> np.ndarray:
        """Every inter-token gap of the finished requests."""
        return self.itl_of()

    @property
    def e2e(self) -> np.ndarray:
        """End-to-end time of each finished request."""
        return (self.finish - self.arrival)[self.done]

    def duration_of(self, skip: int = 0) -> float:
        """From the first kept request's arrival to the last finish (as benchmark clients time a run)."""
        kept = self._kept(skip)
        return float(self.finish[kept].max() - self.arrival[kept].min()) if kept.any() else 0.0

    @property
    def duration(self) -> float:
        """From the first arrival to the last finish."""
        return self.duration_of()

    def summary(self, skip: int = 0) -> dict[str, float]:
        """Mean/p50/p95/p99 time to first token and inter-token latency, output tokens/s, requests/s, the most
        requests running at once and the KV cache's size in tokens; `skip` leaves out the first requests issued (a
        closed loop's first C all arrive at t = 0, a burst steady traffic never sees)."""
        out: dict[str, float] = {}
        ttft = self.ttft_of(skip)
        for name, stats in (
            ("ttft", (np.mean(ttft), *np.percentile(ttft, [50, 95, 99])) if ttft.size else (math.nan,) * 4),
            ("itl", self.gaps.sample(self._kept(skip)).stats((50.0, 95.0, 99.0))),
        ):
            keys = (f"{name}_mean_s", f"{name}_p50_s", f"{name}_p95_s", f"{name}_p99_s")
            out.update(dict(zip(keys, stats, strict=True)))
        seconds = self.duration_of(skip)
        finished = int(self._kept(skip).sum())
        out["output_tokens_per_s"] = finished * self.output / seconds if seconds > 0 else math.nan
        out["requests_per_s"] = finished / seconds if seconds > 0 else math.nan
        out["max_in_flight"] = int(self.running.max()) if self.running.size else 0
        out["kv_tokens"] = self.limits.kv_tokens
        return {key: float(value) for key, value in out.items()}


def _arrivals(traffic: Traffic) -> np.ndarray:
    """Arrival times of an open workload (Poisson or offline); a closed loop's come from its finishes."""
    if traffic.mode == "poisson":
        gaps = np.random.default_rng(traffic.seed).exponential(1.0 / traffic.rate, traffic.requests)
        return np.cumsum(gaps) - gaps[0]  # the first request opens the run at t = 0
    return np.zeros(traffic.requests)


def _steps_that_fit(ctx: np.ndarray, held_blocks: np.ndarray, block: int, free: int, most: int) -> int:
    """The most decode steps (1 … `most`) whose new blocks the free ones cover, for requests at `ctx` tokens holding
    `held_blocks` blocks: beyond it a request finds no free block, and the engine preempts."""

    def grow(steps: int) -> int:
        return int(np.maximum(-(-(ctx + steps - 1) // block) - held_blocks, 0).sum())

    if grow(most) <= free:
        return most
    low, high = 1, most  # grow(low) fits (or low is 1), grow(high) does not
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if grow(mid) <= free else (low, mid)
    return low


def simulate(
    s: sv.Setup,
    traffic: Traffic,
    limits: Limits,
    *,
    max_steps: int = 1_000_000_000,
    max_events: int = MAX_EVENTS,
    max_wall_s: float = 30.0,
) -> Result:
    """Run the requests through the engine; ValueError names a field that cannot be simulated. Three caps stop a run
    early (its `stopped_by` says which, its `note` how far it got): engine steps, the simulator's own moves (a mixed
    step or a stretch of decoding: what a run costs) and seconds of computing."""
    problem = traffic_problem(traffic)
    if problem:
        raise ValueError(problem)
    n, p, o, block = traffic.requests, traffic.prompt, traffic.output, limits.block
    if math.ceil((p + o - 1) / block) > limits.kv_blocks:
        raise ValueError(
            f"prompt: one request of {p:,} + {o:,} tokens needs more KV cache than the {limits.kv_tokens:,} tokens "
            "this model copy holds; no batch can hold it"
        )
    model = sv.StepModel(s)
    cfg = s.config
    full, sliding, window = float(cfg.full_layers), float(cfg.sliding_layers), float(cfg.sliding_window or 0)
    layers = (full, sliding, window)

    def held(ctx: np.ndarray) -> np.ndarray:
        return full * ctx + (sliding * np.minimum(ctx, window) if sliding else 0.0)

    arrival = _arrivals(traffic) if traffic.mode != "closed" else np.full(n, np.inf)
    first = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    log = GapLog()
    gen = np.zeros(n, dtype=np.int64)  # answer tokens produced
    done_prefill = np.zeros(n, dtype=np.int64)  # tokens of the (re)prefill target already in the cache
    target = np.full(n, p, dtype=np.int64)  # tokens to prefill: the prompt, or prompt + answer so far on recompute
    blocks = np.zeros(n, dtype=np.int64)
    last = np.zeros(n)
    waiting: deque[int] = deque()
    run: list[int] = []
    free = limits.kv_blocks
    issued = 0
    if traffic.mode == "closed":
        issued = min(traffic.concurrency, n)
        arrival[:issued] = 0.0
    next_arrival = 0  # index of the next open arrival not yet queued
    t = 0.0
    steps = 0
    finished = 0
    started = time.perf_counter()
    log_t: list[float] = []
    log_wait: list[int] = []
    log_run: list[int] = []
    log_kv: list[int] = []
    stop, stop_kind, events = "", "", 0

    def queue_arrivals(now: float) -> None:
        nonlocal next_arrival
        if traffic.mode == "closed":
            while next_arrival < issued:
                waiting.append(next_arrival)
                next_arrival += 1
            return
        while next_arrival < n and arrival[next_arrival] <= now:
            waiting.append(next_arrival)
            next_arrival += 1

    def finish_request(i: int, now: float) -> None:
        nonlocal free, finished, issued
        finish[i] = now
        free += int(blocks[i])
        blocks[i] = 0
        finished += 1
        if traffic.mode == "closed" and issued < n:
            arrival[issued] = now
            issued += 1

    def record() -> None:
        log_t.append(t)
        log_wait.append(len(waiting))
        log_run.append(len(run))
        log_kv.append(limits.kv_blocks - free)

    while finished < n:
        queue_arrivals(t)
        if not run and not waiting:
            if traffic.mode == "closed" or next_arrival >= n:
                break
            t = float(arrival[next_arrival])
            continue
        if steps >= max_steps:
            stop, stop_kind = f"the step cap ({max_steps:,} steps)", "steps"
            break
        if events >= max_events:
            stop, stop_kind = f"the cap of {max_events:,} simulated moves", "events"
            break
        if events % 64 == 0 and time.perf_counter() - started > max_wall_s:
            stop, stop_kind = f"the time cap ({max_wall_s:g} s of computing)", "time"
            break
        events += 1
        # --- decode tokens of running requests, growing their blocks; preempt the newest when blocks run out
        ids = np.fromiter(run, dtype=np.int64, count=len(run))
        decoding = ids[done_prefill[ids] >= target[ids]] if ids.size else ids
        need = np.maximum(-(-(p + gen[decoding]) // block) - blocks[decoding], 0) if decoding.size else decoding
        while decoding.size and int(need.sum()) > free and run:
            victim = run.pop()
            free += int(blocks[victim])
            blocks[victim] = 0
            done_prefill[victim] = 0
            target[victim] = p + gen[victim]
            waiting.appendleft(victim)
            keep = decoding != victim
            decoding, need = decoding[keep], need[keep]
            ids = ids[ids != victim]
        free -= int(need.sum())  # the decode tokens' new blocks come before any admission
        blocks[decoding] += need
        budget = limits.token_budget - decoding.size
        # --- prompt chunks: requests part-way through their prefill, then new admissions first come, first served
        chunks: list[tuple[int, int, int]] = []
        for i in ids[done_prefill[ids] < target[ids]].tolist() if ids.size > decoding.size else ():
            if budget <= 0:
                break
            c = min(int(target[i] - done_prefill[i]), budget)
            chunks.append((i, int(done_prefill[i]), c))
            budget -= c
        while waiting and budget > 0 and len(run) < limits.max_batch:
            i = waiting[0]
            want = math.ceil((target[i] + limits.reserve * max(o - 1 - int(gen[i]), 0)) / block)
            if want > free:
                break
            waiting.popleft()
            free -= want
            blocks[i] = want
            run.append(i)
            c = min(int(target[i] - done_prefill[i]), budget)
            chunks.append((i, int(done_prefill[i]), c))
            budget -= c
        # --- a stretch of pure decoding: nothing to prefill and no admission possible until a request finishes
        if not chunks and decoding.size:
            horizon = int((o - gen[decoding]).min())
            ctx = (p + gen[decoding]).astype(np.float64)
            if horizon > 1 and limits.preempts:  # as far as the free blocks carry every request's growth
                horizon = _steps_that_fit(ctx, blocks[decoding], block, free, horizon)
            horizon = min(horizon, max_steps - steps)
            if horizon > 1:
                stretch = Stretch.of(model.decode_line(decoding.size), ctx, layers, horizon)
                if not waiting and traffic.mode == "poisson" and next_arrival < n:  # stop where the next one arrives
                    horizon = stretch.steps_until(float(arrival[next_arrival]) - t)
                    stretch = stretch.cut(horizon)
                if o > 1:  # this stretch makes tokens gen + 1 ... gen + horizon: one gap each
                    log.add(decoding, t + stretch.first_step() - last[decoding])
                    log.add_runs(decoding, stretch.runs())
                gen[decoding] += horizon
                blocks[decoding] = np.maximum(blocks[decoding], -(-(p + gen[decoding] - 1) // block))
                free = limits.kv_blocks - int(blocks[np.fromiter(run, dtype=np.int64, count=len(run))].sum())
                t += stretch.seconds()
                last[decoding] = t
                steps += horizon
                for i in decoding[gen[decoding] >= o]:
                    run.remove(int(i))
                    finish_request(int(i), t)
                record()
                continue
        # --- one mixed step
        prefill_tokens = sum(c for _, _, c in chunks)
        prefill_held = pairs = 0.0
        for _, start_at, c in chunks:
            prefill_held += float(held(np.float64(start_at)))
            pairs += float(sv.causal_pairs(cfg, start_at + c) - sv.causal_pairs(cfg, start_at))
        decode_held = float(held((p + gen[decoding]).astype(np.float64)).sum()) if decoding.size else 0.0
        t += model.seconds(decoding.size, decode_held, prefill_tokens, prefill_held, pairs)
        steps += 1
        if decoding.size:
            gen[decoding] += 1
            if o > 1:
                log.add(decoding, t - last[decoding])
            last[decoding] = t
        for i, _, c in chunks:
            done_prefill[i] += c
            if done_prefill[i] >= target[i]:  # the prefill's last chunk yields the next token
                if gen[i] == 0:
                    first[i] = t
                elif o > 1:
                    log.add(np.array([i]), np.array([t - last[i]]))
                gen[i] += 1
                last[i] = t
        ended = decoding[gen[decoding] >= o].tolist() + [i for i, _, _ in chunks if gen[i] >= o]
        for i in ended:
            run.remove(i)
            finish_request(i, t)
        record()

    complete = finished == n
    note = (
        ""
        if complete
        else (
            f"stopped by {stop or 'an empty queue'} after {steps:,} steps at {t:,.1f} s of simulated time: "
            f"{finished:,} of {n:,} requests finished"
        )
    )
    return Result(
        arrival,
        first,
        finish,
        log,
        o,
        np.array(log_t),
        np.array(log_wait),
        np.array(log_run),
        np.array(log_kv),
        limits,
        steps,
        complete,
        note,
        "" if complete else stop_kind or "empty",
    )
