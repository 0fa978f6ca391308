"""Retraining is reproducible bit for bit only where the CPU's float64 kernels add in the recorded run's order: these
helpers tell the two cases apart by the first checkpoint, check what holds on every CPU (round-off-sized differences
early on), and name why the rest cannot be compared on another CPU (training is chaotic: 1e-12 grows to O(1))."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

ROUND_OFF = 1e-9  # the largest difference round-off alone reaches in the first few dozen steps (measured: 1.4e-11)


def identical(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> bool:
    """Whether two weight sets are equal bit for bit."""
    return a.keys() == b.keys() and all(np.array_equal(a[name], b[name]) for name in a)


def largest_difference(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> float:
    """The largest absolute difference between two weight sets with the same names."""
    return max(float(np.max(np.abs(a[name] - b[name]))) for name in a)


def skip_on_other_kernels(what: str, early: float) -> None:
    """Skip the bit-for-bit rest of a test on a CPU whose kernels add in another order, saying why."""
    import torch

    pytest.skip(
        f"{what}: this CPU's float64 kernels ({torch.backends.cpu.get_cpu_capability()}) add in another order than "
        f"the recorded run's; the early weights agree to {early:.1e} (round-off), and training being chaotic, the "
        "later ones cannot be compared bit for bit here"
    )
