"""A stretch of pure decode steps in the traffic simulator: the same requests decode one token each per step, so each
step reads a few more cached pairs than the one before and its time (a line in the pairs read,
`serving.StepModel.decode_line`) grows step by step. With full attention the times are one arithmetic progression;
with sliding-window layers a request stops growing once it holds its window, so the times are a few progressions
(one per stretch of steps between two requests reaching their windows). Sums and crossings are worked out per piece,
never step by step: a stretch of 100,000 steps costs what one of ten does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Stretch:
    """`steps` decode steps: piece k covers steps begin[k] … begin[k+1] - 1, step j of it taking
    first[k] + slope[k] * (j - begin[k]) seconds."""

    begin: np.ndarray
    first: np.ndarray
    slope: np.ndarray
    steps: int

    @classmethod
    def of(
        cls,
        line: tuple[float, float],
        context: np.ndarray,
        layers: tuple[float, float, float],
        steps: int,
    ) -> Stretch:
        """The stretch of `steps` steps of requests holding `context` tokens at its first step; `line` the step's
        (seconds at no pair, seconds per pair); `layers` (full-attention layers, sliding layers, their window)."""
        intercept, per_pair = line
        full, sliding, window = layers
        n = float(context.size)
        ctx = context.astype(np.float64)
        if not sliding:
            held0 = full * float(ctx.sum())
            return cls(
                np.array([0]),
                np.array([intercept + per_pair * held0]),
                np.array([per_pair * full * n]),
                steps,
            )
        reach = np.clip(window - ctx, 0, None)  # steps until each request holds its whole window
        order = np.argsort(reach, kind="stable")
        reach, ctx = reach[order], ctx[order]
        cuts = np.unique(np.concatenate(([0.0], reach[reach < steps]))).astype(np.int64)
        full_ones = np.searchsorted(reach, cuts, side="right")  # requests already at their window at each cut
        growing = n - full_ones
        growing_ctx = float(ctx.sum()) - np.concatenate(([0.0], np.cumsum(ctx)))[full_ones]
        held = full * (ctx.sum() + n * cuts) + sliding * (growing_ctx + growing * cuts + full_ones * window)
        return cls(cuts, intercept + per_pair * held, per_pair * (full * n + sliding * growing), steps)

    def _lengths(self) -> np.ndarray:
        return np.diff(np.append(self.begin, self.steps))

    @staticmethod
    def _sum(first: float, slope: float, count: float) -> float:
        return count * first + slope * count * (count - 1) / 2.0

    def first_step(self) -> float:
        """Seconds of the stretch's first step."""
        return float(self.first[0])

    def seconds(self) -> float:
        """Seconds of the whole stretch."""
        return float(sum(self._sum(f, s, m) for f, s, m in zip(self.first, self.slope, self._lengths(), strict=True)))

    def steps_until(self, seconds: float) -> int:
        """The fewest steps (at least 1) whose time reaches `seconds` from the stretch's start; all its steps when
        the whole stretch ends before."""
        done = 0.0
        for b, f, s, m in zip(self.begin, self.first, self.slope, self._lengths(), strict=True):
            whole = self._sum(f, s, m)
            if done + whole < seconds:
                done += whole
                continue
            left = seconds - done  # within this piece: the fewest h with h·f + s·h(h−1)/2 ≥ left
            if s > 0:
                h = math.ceil((-(f - s / 2) + math.sqrt((f - s / 2) ** 2 + 2 * s * left)) / s)
            else:
                h = math.ceil(left / f) if f > 0 else 1
            h = int(min(max(h, 1), m))
            while h > 1 and self._sum(f, s, h - 1) >= left:  # the root's rounding, corrected both ways
                h -= 1
            while h < m and self._sum(f, s, h) < left:
                h += 1
            return max(1, int(b) + h)
        return self.steps

    def cut(self, steps: int) -> Stretch:
        """The stretch's first `steps` steps."""
        keep = self.begin < steps
        return Stretch(self.begin[keep], self.first[keep], self.slope[keep], steps)

    def runs(self, start: int = 1) -> list[tuple[float, float, int]]:
        """The step times from step `start` on, as (first, slope, count) arithmetic progressions."""
        out = []
        for b, f, s, m in zip(self.begin, self.first, self.slope, self._lengths(), strict=True):
            skip = max(0, start - int(b))
            if skip < m:
                out.append((float(f + s * skip), float(s), int(m - skip)))
        return out
