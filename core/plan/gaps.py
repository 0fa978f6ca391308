"""The inter-token gaps of a simulated run, kept without holding one number per token.

A stretch of pure decoding gives every running request the same gaps, one per step, and within a stretch a step's
time grows linearly with the tokens held (core.plan.serving's step model), so the stretch's shared gaps are a few
arithmetic progressions. A run of 240 requests with 100,000-token answers makes 24 million gaps; kept this way it holds
about 75,000 numbers (a mixed step's gaps, one per running request, and the runs). The statistics are exact: the mean,
and the percentiles numpy.percentile (its default, linear method) computes on the whole list of gaps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_BITS = np.int64  # a non-negative float's bit pattern, as an integer, orders as the float does
EXPAND = 2_000_000  # up to this many gaps the statistics are numpy's own on the gaps written out (16 MB at most)


@dataclass(frozen=True)
class Runs:
    """Arithmetic progressions of gaps shared by a set of requests: value j of a run is `start + step * j`
    (j = 0 … count - 1, step ≥ 0); `weight` is how many of the kept requests share it."""

    start: np.ndarray
    step: np.ndarray
    count: np.ndarray
    weight: np.ndarray

    def at_most(self, x: float) -> int:
        """How many of the runs' gaps (with their weights) are at most `x`."""
        if not self.start.size:
            return 0
        s, d = self.start, self.step
        low = np.full(s.shape, -1, dtype=np.int64)  # the last j known to be at most x (-1: none)
        high = self.count.astype(np.int64)  # the first j known to be above it (count: none)
        while (open_ := high - low > 1).any():  # s + d·j is monotone in j even where rounding makes steps vanish
            mid = (low + high) // 2
            below = s + d * mid <= x
            low = np.where(open_ & below, mid, low)
            high = np.where(open_ & ~below, mid, high)
        return int(((low + 1) * self.weight).sum())


@dataclass(frozen=True)
class Sample:
    """The kept gaps: single values (sorted) and shared runs; the statistics a summary reports."""

    values: np.ndarray
    runs: Runs

    @property
    def size(self) -> int:
        """How many gaps in all."""
        return int(self.values.size + (self.runs.count * self.runs.weight).sum())

    def stats(self, percentiles: tuple[float, ...]) -> tuple[float, ...]:
        """The mean and the percentiles (NaN when there is no gap): numpy's own on the gaps written out while they
        are few, the same figures from the runs otherwise."""
        n = self.size
        if not n:
            return (math.nan,) * (1 + len(percentiles))
        if n <= EXPAND:
            every = self.expand()
            return (float(np.mean(every)), *map(float, np.percentile(every, percentiles)))
        return (self.mean(), *(self.percentile(q) for q in percentiles))

    def mean(self) -> float:
        """The mean gap, from the runs' sums (NaN when there is none)."""
        n = self.size
        if not n:
            return math.nan
        r = self.runs
        runs = (r.weight * (r.count * r.start + r.step * r.count * (r.count - 1) / 2.0)).sum()
        return float((self.values.sum() + runs) / n)

    def _at_most(self, x: float) -> int:
        return int(np.searchsorted(self.values, x, side="right")) + self.runs.at_most(x)

    def _kth(self, k: int) -> float:
        """The k-th smallest gap (0-based): the smallest float with more than k gaps at most it."""
        lows = [float(self.values[0])] if self.values.size else []
        highs = [float(self.values[-1])] if self.values.size else []
        r = self.runs
        if r.start.size:
            lows.append(float(r.start.min()))
            highs.append(float((r.start + r.step * (r.count - 1)).max()))
        lo, hi = np.array([min(lows), max(highs)], dtype=np.float64).view(_BITS)
        while lo < hi:  # bisect the bit patterns: every float between the two is a candidate
            mid = lo + (hi - lo) // 2
            if self._at_most(float(np.array(mid, dtype=_BITS).view(np.float64))) > k:
                hi = mid
            else:
                lo = mid + 1
        return float(np.array(lo, dtype=_BITS).view(np.float64))

    def percentile(self, q: float) -> float:
        """The q-th percentile as numpy.percentile's linear method gives it on every gap, found without writing the
        gaps out (NaN when there is none)."""
        n = self.size
        if not n:
            return math.nan
        position = (q / 100.0) * (n - 1)
        below = math.floor(position)
        gamma = position - below
        a = self._kth(min(below, n - 1))
        b = self._kth(min(below + 1, n - 1))
        diff = b - a
        return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)

    def expand(self) -> np.ndarray:
        """Every gap as one array (single values first, then each run repeated by its weight): for small runs."""
        r = self.runs
        parts = [self.values]
        for s, d, m, w in zip(r.start, r.step, r.count, r.weight, strict=True):
            parts += [s + d * np.arange(m, dtype=np.float64)] * int(w)
        return np.concatenate(parts) if parts else np.zeros(0)


class GapLog:
    """What the simulator records of every generated token's gap: single gaps of named requests (a mixed step's,
    or a stretch's first gap, which depends on each request's last token) and runs shared by a set of requests."""

    def __init__(self) -> None:
        self._ids: list[np.ndarray] = []
        self._values: list[np.ndarray] = []
        self._run_sets: list[np.ndarray] = []  # the requests of each recorded stretch
        self._runs: list[tuple[int, float, float, int]] = []  # (its stretch, start, step, count)

    def add(self, ids: np.ndarray, values: np.ndarray) -> None:
        """One gap each for these requests."""
        if ids.size:
            self._ids.append(np.asarray(ids, dtype=np.int64).copy())
            self._values.append(np.asarray(values, dtype=np.float64).copy())

    def add_runs(self, ids: np.ndarray, runs: list[tuple[float, float, int]]) -> None:
        """The same gaps for every one of these requests: runs of (start, step, count)."""
        runs = [r for r in runs if r[2] > 0]
        if ids.size and runs:
            self._run_sets.append(np.asarray(ids, dtype=np.int64).copy())
            index = len(self._run_sets) - 1
            self._runs += [(index, float(s), max(float(d), 0.0), int(m)) for s, d, m in runs]

    def sample(self, kept: np.ndarray) -> Sample:
        """The gaps of the kept requests (`kept`: one flag per request)."""
        if self._ids:
            ids, values = np.concatenate(self._ids), np.concatenate(self._values)
            values = np.sort(values[kept[ids]])
        else:
            values = np.zeros(0)
        weights = np.array([int(kept[s].sum()) for s in self._run_sets], dtype=np.int64)
        table = np.array(self._runs, dtype=np.float64).reshape(-1, 4)
        w = weights[table[:, 0].astype(np.int64)] if table.size else np.zeros(0, dtype=np.int64)
        use = w > 0
        runs = Runs(table[use, 1], table[use, 2], table[use, 3].astype(np.int64), w[use])
        return Sample(values, runs)
