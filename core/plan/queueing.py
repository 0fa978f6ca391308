"""Latency under load without simulating: an analytic shortcut for the p50 and p95 time to first token and inter-token
latency of one model copy at a Poisson request rate, checked against the traffic simulator (core.plan.simulator) in
tests/unit/test_queueing.py, fast enough for the planner's search over every GPU and GPUs per copy.

The model, on top of the calibrated step time (core.plan.serving.StepModel), for requests of P prompt and O answer
tokens arriving at λ per second:
- **Steps.** Every engine step runs the decode tokens of the N requests decoding plus the prompts that arrived during
  the step before (gated: a prompt waits for the step under way to end), within the engine's token budget. A step
  with K prompts lasts L = τ₀ + δ·K: τ₀ the decode-only step of N sequences, δ what one prompt adds to it.
- **Means.** Little's law gives N = λ·(O − 1)·τ̄ and K̄ = λ·τ̄, so the mean step τ̄ solves τ̄ = step(N, K̄): a fixed
  point of a map that grows with τ, approached from below. A map that never comes back under the diagonal is a
  copy past its capacity: the queue grows without bound.
- **Spread.** K given the last step's length is Poisson(λ·L), so the step length has variance δ²·λ·τ̄ / (1 − λ²δ²).
  An inter-token gap is one step: its quantiles are τ₀ + δ·(the quantile of K, Poisson at the mean step, in whole
  prompts; 0 while a step carries no prompt often enough, exp(−λτ₀ + K̄·(e^(−λδ) − 1)) given the step before it),
  no longer than a step with a full token budget. (A negative binomial with the step length's spread put
  the p95 gap one prompt too high near saturation on the simulator's grid; the plain Poisson matched it.)
- **First token.** A request arriving to a busy copy (probability 1 − e^(−mean requests in the copy)) waits out the
  step under way (length-biased, gamma-distributed), then the step that carries its prompt with the others that
  arrived meanwhile; to an idle copy it is its own prefill. On top come two queues that form only near a limit: the
  engine's batch cap or KV cache (M/D/c with c the requests the copy can hold, Sakasegawa's waiting probability) and
  the per-step token budget (M/D/1 on the prompt tokens). The quantiles are a gamma distribution's with the same
  mean and variance (Wilson-Hilferty).

What it leaves out, besides what the simulator leaves out: preemption and recomputation when a growing cache runs out
(the cap uses the mean cache a request holds), the order of a prompt's chunks, and the warm-up of a run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from statistics import NormalDist

from core.plan import kv_memory as kv
from core.plan import load_sizing as ls
from core.plan import serving as sv
from core.plan import simulator as sim
from core.plan.model_config import ModelConfig

NORMAL = NormalDist()
Z95 = NORMAL.inv_cdf(0.95)
SOLVER_STEPS = 60  # the mean step's fixed point: a few steps on a piecewise-linear map, more only near capacity
RATE_TOLERANCE = 0.01  # the largest rate meeting a target, to 1 % (the shortcut's own error is larger)
BISECTIONS = 24  # at most, from a bracket [0, ceiling]


@dataclass(frozen=True)
class Estimate:
    """The analytic figures at one rate per copy: the latencies as a simulated `load_sizing.Point` reports them, the
    mean step, the mean requests decoding and whether the copy keeps up at all (`stable`)."""

    point: ls.Point
    step_s: float
    decoding: float
    stable: bool


def _gamma_quantile(mean: float, var: float, z: float) -> float:
    """A quantile of the gamma distribution with this mean and variance (Wilson-Hilferty), z its normal score."""
    if var <= 1e-18 * max(mean * mean, 1e-30) or mean <= 0:
        return mean
    shape = mean * mean / var
    h = 1.0 / (9.0 * shape)
    return max(0.0, mean * (1.0 - h + z * math.sqrt(h)) ** 3)


def _with_wait(mean: float, var: float, p_wait: float, wait: float, q: float) -> float:
    """The q-quantile of a gamma time (this mean and variance) plus a wait that happens with probability `p_wait`
    and then lasts an exponential time of mean `wait`: the lower of two estimates, the gamma with the sum's mean and
    variance (right when the wait is common or short) and the time's own quantile with the wait's share of the tail
    taken out, or the wait's own quantile when it is commoner than the tail (right when it is rare and long)."""
    p_wait = min(p_wait, 1.0)
    z = Z95 if q == 0.95 else NORMAL.inv_cdf(q)
    if p_wait <= 0:
        return _gamma_quantile(mean, var, z)
    moments = _gamma_quantile(mean + p_wait * wait, var + p_wait * (2 - p_wait) * wait * wait, z)
    share = max(1.0 - q - p_wait, 0.1 * (1.0 - q))  # the tail left to the gamma time
    split = _gamma_quantile(mean, var, NORMAL.inv_cdf(1.0 - share))
    if p_wait > 1.0 - q and wait > 0:
        split = max(split, mean + wait * math.log(p_wait / (1.0 - q)))
    return min(moments, split)


def _poisson_quantile(mean: float, q: float) -> float:
    """The q-quantile of a Poisson count: the smallest whole count whose cumulative probability reaches q, as the
    empirical quantile over many steps is (a normal approximation past 40 on average)."""
    if mean <= 0:
        return 0.0
    if mean > 40.0:
        return max(0.0, math.ceil(mean + (Z95 if q > 0.5 else 0.0) * math.sqrt(mean) - 0.5))
    pmf = math.exp(-mean)
    cdf, k = pmf, 0
    while cdf < q:
        k += 1
        pmf *= mean / k
        cdf += pmf
    return float(k)


class Queue:
    """One model copy under Poisson traffic of one request shape: its step model, the engine's limits and the
    request's per-step work, ready to be asked about any rate (`at`) or the largest rate a target allows
    (`max_rate`)."""

    def __init__(self, s: sv.Setup, limits: sim.Limits, prompt: int, output: int) -> None:
        self.model = sv.StepModel(s)
        self.limits = limits
        self.prompt, self.output = prompt, output
        cfg = s.config
        self._held_decode = float(sv.held_layer_tokens(cfg, prompt + output / 2))
        self._pairs = float(sv.causal_pairs(cfg, prompt))
        r = limits.reserve  # the mean cache a request holds: its reserve at admission, then what it grows to
        self.kv_per_request = prompt + (output - 1) * (1 + r * r) / 2 + limits.block / 2
        self.capacity = max(1.0, min(float(limits.max_batch), limits.kv_tokens / self.kv_per_request))
        self._cfg = cfg
        self._last = (-1.0, 0.0, 0.0)
        self._lone = self.step(0.0, 1.0)  # a prompt on an idle copy: its own prefill, the first token
        self._single = self.step(1.0, 0.0)  # one request decoding alone

    # ------------------------------------------------------------------------------------------- step times
    def step(self, decoding: float, prompts: float) -> float:
        """Seconds of a step of `decoding` decode tokens and `prompts` whole prompts (fractions: a share of one)."""
        chunk = self.prompt * prompts
        return self.model.seconds(decoding, decoding * self._held_decode, chunk, 0.0, self._pairs * prompts)

    def _pair(self, decoding: float) -> tuple[float, float]:
        """(a step of `decoding` decodes, the same with one whole prompt), the last pair remembered (`at` asks for
        the pair its mean step ended on)."""
        last = self._last  # one tuple read and one written: sessions sharing the cached queue never mix two pairs
        if last[0] != decoding:
            last = (decoding, *self.model.pair(decoding, decoding * self._held_decode, self.prompt, self._pairs))
            self._last = last
        return last[1], last[2]

    def _prompt_steps(self, decoding: float) -> tuple[int, float]:
        """(steps one prompt's prefill takes beside `decoding` decodes, the seconds of those steps)."""
        free = max(1.0, self.limits.token_budget - decoding)
        if self.prompt <= free:
            base, one = self._pair(decoding)
            return 1, one - base
        chunks = math.ceil(self.prompt / free)
        done, seconds = 0.0, 0.0
        for _ in range(chunks):
            c = min(free, self.prompt - done)
            held = float(sv.held_layer_tokens(self._cfg, done))
            pairs = float(sv.causal_pairs(self._cfg, done + c) - sv.causal_pairs(self._cfg, done))
            seconds += self.model.seconds(decoding, decoding * self._held_decode, c, held, pairs)
            seconds -= self.model.seconds(decoding, decoding * self._held_decode)
            done += c
        return chunks, seconds

    def mean_step(self, rate: float) -> float:
        """The mean step τ̄ at `rate`: τ = τ₀(N) + δ(N)·λτ with N = λ(O − 1)τ: the smallest fixed point, approached
        from below (secant, then false position); inf past capacity."""
        o1 = self.output - 1

        def f(tau: float) -> float:  # a step holds whole prompts: its mean is τ₀ + δ·K̄, not the step of K̄ prompts
            base, one = self._pair(max(rate * o1 * tau, 1.0))
            return base + (one - base) * rate * tau

        # f grows with τ, so the smallest fixed point is approached from below: secant steps while g = f − τ > 0
        # (a plain f step where the secant does not point forward), then false position (Illinois) once a step
        # overshoots; past the τ at which the copy would hold more requests than it can, it never keeps up
        beyond = self.capacity / (rate * o1) if rate * o1 > 0 else math.inf
        lo, g_lo = 0.0, f(0.0)
        hi, g_hi = math.inf, 0.0
        t, side = g_lo, 0
        for _ in range(SOLVER_STEPS):
            if t > beyond:
                return math.inf
            g = f(t) - t
            if abs(g) <= 1e-9 * t:
                return t
            if g > 0:
                slope = (g - g_lo) / (t - lo)
                lo, g_lo = t, g
                if side == 1:
                    g_hi /= 2
                side = 1
            else:
                hi, g_hi = t, g
                if side == -1:
                    g_lo /= 2
                side = -1
            if math.isfinite(hi):  # bracketed: false position
                t = lo - g_lo * (hi - lo) / (g_hi - g_lo)
                continue
            t = t - g / slope if slope < 0 else t + g  # below the root: a secant step, or an f step
        return t if math.isfinite(hi) and hi - lo <= 1e-6 * hi else math.inf

    # ------------------------------------------------------------------------------------------- one rate
    def at(self, rate: float) -> Estimate:
        """The p50 and p95 time to first token and inter-token latency at `rate` requests per second."""
        lone, single = self._lone, self._single
        if rate <= 0:
            return Estimate(ls.Point(0.0, lone, lone, single, single, True), single, 1.0, True)
        parts = self._parts(rate)
        if parts is None:
            return self._unstable(rate)
        itl = [self._itl(parts, rate, q) for q in (0.5, 0.95)]
        ttft = self._ttft(parts, rate, (0.5, 0.95))
        return Estimate(ls.Point(rate, ttft[0], ttft[1], itl[0], itl[1], True), parts[0], parts[1], True)

    def meets(self, rate: float, ttft_s: float, itl_s: float) -> bool:
        """Whether the p95 first token and inter-token latency at `rate` are within `ttft_s` and `itl_s` (the same
        figures as `at`, the gap first: a rate whose gap misses skips the first token's arithmetic)."""
        if rate <= 0:
            return self._lone <= ttft_s and self._single <= itl_s
        parts = self._parts(rate)
        if parts is None or self._itl(parts, rate, 0.95) > itl_s:
            return False
        return self._ttft(parts, rate, (0.95,))[0] <= ttft_s

    def _parts(self, rate: float) -> tuple[float, ...] | None:
        """(τ̄, decoding, in the copy, N, τ₀, prompt steps, δ, prompts per step, free budget, budget load) at `rate`,
        or None when the copy cannot keep up."""
        tau = self.mean_step(rate)
        decoding = rate * (self.output - 1) * tau
        in_copy = decoding + rate * tau  # requests decoding or prefilling
        if not math.isfinite(tau) or in_copy >= self.capacity:
            return None
        n = max(decoding, 1.0)
        base = self._pair(n)[0]
        chunks, delta = self._prompt_steps(n)
        per_step = rate * tau  # prompts arriving per step
        free = max(1.0, self.limits.token_budget - n)
        budget_load = per_step * self.prompt / free
        if budget_load >= 1.0 or rate * delta >= 1.0:
            return None
        return tau, decoding, in_copy, n, base, float(chunks), delta, per_step, free, budget_load

    def _itl(self, parts: tuple[float, ...], rate: float, q: float) -> float:
        """The q-quantile of the gap between tokens: one step, τ₀ plus δ for each prompt it carries."""
        _, _, _, n, base, _, delta, per_step, free, _ = parts
        full = self.step(n, min(free / self.prompt, 1e9)) if self.prompt > 0 else base
        # a step carries no prompt when none arrived during the one before it, whose length is τ₀ + δ·K': that chance
        # is exp(−λτ₀ + K̄(e^(−λδ) − 1)), above the plain Poisson's exp(−λτ̄) (long steps cluster)
        empty = math.exp(-rate * base + per_step * (math.exp(-rate * delta) - 1.0))
        return min(base + (0.0 if empty >= q else delta * _poisson_quantile(per_step, q)), full)

    def _ttft(self, parts: tuple[float, ...], rate: float, qs: tuple[float, ...]) -> list[float]:
        """The qs-quantiles of the time to first token: the step under way, the step carrying the prompt, the
        queues near a limit."""
        tau, _, in_copy, _, base, chunks, delta, _, free, budget_load = parts
        lone = self._lone
        # step length: L = τ₀ + δ·K, K | L ~ Poisson(λL); its stationary variance
        var_step = delta * delta * rate * tau / (1.0 - (rate * delta) ** 2)
        # first token, busy copy: the residual of a length-biased step, then the step carrying the prompt
        if var_step > 0:  # a gamma step length, length-biased: shape k + 1 at the same scale
            shape, scale = tau * tau / var_step, var_step / tau
            biased_mean, biased_var = (shape + 1) * scale, (shape + 1) * scale * scale
        else:
            biased_mean, biased_var = tau, 0.0
        biased_sq = biased_var + biased_mean**2
        residual_mean, residual_var = biased_mean / 2, biased_sq / 3 - (biased_mean / 2) ** 2
        own = chunks * base + delta if chunks > 1 else base + delta
        others_mean = delta * rate * biased_mean
        others_var = delta * delta * (rate * biased_mean + rate * rate * biased_var)
        busy_mean = residual_mean + own + others_mean
        busy_var = residual_var + others_var + 2 * delta * rate * biased_var / 2
        busy = 1.0 - math.exp(-in_copy)
        mean = busy * busy_mean + (1 - busy) * lone
        second = busy * (busy_var + busy_mean**2) + (1 - busy) * lone * lone
        var = max(second - mean * mean, 0.0)
        # queues that form near a limit: the copy's request cap (M/D/c) and the token budget (M/D/1); a request
        # waits with probability p, then an exponential time of mean w (the two merged as one such wait)
        (p1, w1), (p2, w2) = self._cap_wait(in_copy, tau), self._budget_wait(budget_load, tau * self.prompt / free)
        p_wait = 1.0 - (1.0 - p1) * (1.0 - p2)
        wait = (p1 * w1 + p2 * w2) / p_wait if p_wait > 0 else 0.0
        return [_with_wait(mean, var, p_wait, wait, q) for q in qs]

    def _cap_wait(self, in_copy: float, tau: float) -> tuple[float, float]:
        """(probability of waiting, mean wait when waiting) for a place among the requests the copy can hold."""
        c = self.capacity
        rho = in_copy / c
        if rho <= 0:
            return 0.0, 0.0
        service = self.output * tau
        return min(1.0, rho ** (math.sqrt(2 * (c + 1)) - 1)), service / (2 * c * (1 - rho))

    @staticmethod
    def _budget_wait(rho: float, service: float) -> tuple[float, float]:
        """(probability of waiting, mean wait when waiting) for room in the per-step token budget."""
        return (rho, service / (2 * (1 - rho))) if rho > 0 else (0.0, 0.0)

    def _unstable(self, rate: float) -> Estimate:
        inf = math.inf
        return Estimate(ls.Point(rate, inf, inf, inf, inf, False), inf, inf, False)

    # ------------------------------------------------------------------------------------------- a target
    def ceiling(self) -> float:
        """A rate no copy keeps up with: the requests it can hold over one answer's decode-only steps, or one prompt
        per step's worth of prefill, whichever is lower."""
        held = self.step(self.capacity, 0.0) * (self.output - 1)
        prompt = self.step(1.0, 1.0) - self.step(1.0, 0.0)
        return min(self.capacity / held if held > 0 else math.inf, 1.0 / prompt if prompt > 0 else math.inf)

    def max_rate(self, ttft_s: float, itl_s: float) -> float:
        """The largest rate per copy whose p95 first token and inter-token latency are within `ttft_s` and `itl_s`
        (0: none), by bisection between 0 and the ceiling, to `RATE_TOLERANCE`."""
        if not self.meets(0.0, ttft_s, itl_s):  # one request alone: no rate meets a target it misses
            return 0.0
        low, high = 0.0, self.ceiling()
        for _ in range(BISECTIONS):
            if high - low <= RATE_TOLERANCE * high:
                break
            mid = (low + high) / 2
            low, high = (mid, high) if self.meets(mid, ttft_s, itl_s) else (low, mid)
        return low


@lru_cache(maxsize=512)  # 512 × ~5 kB
def queue(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, prompt: int, output: int) -> Queue:
    """The analytic queue of one copy of the deployment for one request shape (cached by small frozen keys)."""
    return Queue(ls.setup_of(config, dep, eff), ls.limits_of(config, dep, eff), prompt, output)


@lru_cache(maxsize=1024)  # 1,024 × ~0.5 kB
def max_rate(
    config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, prompt: int, output: int, ttft_s: float, itl_s: float
) -> float:
    """The largest rate per copy meeting the targets (cached: a new peak rate re-runs no model, only the division)."""
    return queue(config, dep, eff, prompt, output).max_rate(ttft_s, itl_s)


def at_rate(config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload, rate: float) -> ls.Point:
    """The analytic p50 and p95 latencies of one copy at `rate` requests per second, as a simulated point reads."""
    return queue(config, dep, eff, load.prompt_tokens, load.output_tokens).at(rate).point


@lru_cache(maxsize=512)  # 512 × ~0.5 kB
def size_under_load(
    config: ModelConfig, dep: kv.Deployment, eff: sv.Efficiency, load: sv.Workload
) -> tuple[sv.Sizing | None, str | None]:
    """Size a workload by the analytic p95s under load: each copy carries at most the largest rate per copy whose p95
    first token and inter-token latency meet the target, so the copies are the peak rate over that; the static sizing
    (core.plan.serving.size_workload) supplies the batch, the memory and the bill's input/output split. Returns
    (sizing, None) or (None, why no number of copies can serve it)."""
    static, reason = sv.size_workload(config, dep, eff, load)
    if static is None:
        return None, reason
    q = queue(config, dep, eff, load.prompt_tokens, load.output_tokens)
    limits = q.limits
    if math.ceil((load.prompt_tokens + load.output_tokens - 1) / limits.block) > limits.kv_blocks:
        return None, (
            f"not one request of {load.prompt_tokens + load.output_tokens:,} tokens fits the KV cache {dep.engine} "
            f"leaves on {dep.tp} × {dep.gpu.name} ({limits.kv_tokens:,} tokens)"
        )
    lone = q.at(0.0).point
    if not lone.meets(load):
        return None, ls.no_copies_reason(config, dep, load, lone)[1]
    per_copy = max_rate(config, dep, eff, load.prompt_tokens, load.output_tokens, load.ttft_s, ls.itl_target(load))
    if per_copy <= 0:
        return None, ls.no_copies_reason(config, dep, load, lone)[1]
    rate = load.requests_per_minute / 60.0
    copies = max(1, math.ceil(rate / per_copy - 1e-9))
    at_peak = q.at(rate / copies).point
    monthly = copies * dep.tp * load.hours_per_month * dep.price_per_gpu_hour  # GPU-hours first: the search's order
    requests = static.monthly_requests
    p, o = load.prompt_tokens, load.output_tokens
    return (
        replace(
            static,
            copies=copies,
            gpus=copies * dep.tp,
            utilisation=rate / (copies * per_copy),
            requests_per_s_copy=per_copy,
            monthly_cost=monthly,
            cost_per_m_input=1e6 * monthly * static.prefill_share / (requests * p) if requests else math.inf,
            cost_per_m_output=1e6 * monthly * (1 - static.prefill_share) / (requests * o) if requests else math.inf,
            cost_per_request=monthly / requests if requests else math.inf,
            load_ttft_p95_s=at_peak.ttft_p95,
            load_itl_p95_s=at_peak.itl_p95,
            load_model="analytic",
        ),
        None,
    )
