"""Shared timing for the benchmarks: interleaved rounds, median of per-round ratios.

Interleaving Olympus and JAX in every round cancels drift (frequency scaling,
other load) that would bias two separate series.

>>> r = compare(lambda: None, lambda: None, rounds=3, number=10)
>>> r.rounds
3
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Callable


@dataclasses.dataclass(frozen=True)
class Comparison:
    olympus_s: float  # median seconds per call, Olympus
    jax_s: float  # median seconds per call, JAX
    ratio: float  # median of per-round Olympus/JAX ratios
    rounds: int

    def line(self, what: str, budget: float) -> str:
        verdict = "ok" if self.ratio <= budget else "OVER BUDGET"
        return (
            f"{what}: olympus {self.olympus_s * 1e6:,.2f} us, jax {self.jax_s * 1e6:,.2f} us, "
            f"ratio {self.ratio:.3f} (budget <= {budget:.2f}) {verdict}"
        )


def _time(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def compare(
    olympus_fn: Callable[[], object],
    jax_fn: Callable[[], object],
    *,
    rounds: int = 15,
    number: int = 1,
) -> Comparison:
    """Times both callables ``number`` times per round, alternating which goes first."""
    ours, theirs, ratios = [], [], []
    for i in range(rounds):
        if i % 2:
            t_jax = _time(jax_fn, number)
            t_ol = _time(olympus_fn, number)
        else:
            t_ol = _time(olympus_fn, number)
            t_jax = _time(jax_fn, number)
        ours.append(t_ol)
        theirs.append(t_jax)
        ratios.append(t_ol / t_jax)
    return Comparison(
        statistics.median(ours), statistics.median(theirs), statistics.median(ratios), rounds
    )
