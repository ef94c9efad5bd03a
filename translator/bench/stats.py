"""timing samples -> statistics: medians with quartiles, sampling until the median is stable, ratios, autotune picks.

Pure Python (no torch, no GPU), so every rule that decides what a benchmark reports is tested on the CPU.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass


def summary(samples: list[float]) -> dict:
    """Median, quartiles (the spread), extremes and count of timings in microseconds."""
    ts = sorted(samples)
    if not ts:
        return {"median_us": None, "q1_us": None, "q3_us": None, "min_us": None, "max_us": None, "n": 0}
    if len(ts) >= 2:
        q1, _, q3 = statistics.quantiles(ts, n=4, method="inclusive")
    else:
        q1 = q3 = ts[0]
    return {"median_us": statistics.median(ts), "q1_us": q1, "q3_us": q3, "min_us": ts[0], "max_us": ts[-1],
            "n": len(ts)}


@dataclass
class Sampling:
    """When to stop taking samples: at least `min_samples` each, then when no median moved by more than
    `rel_tol` over the last batch; or at `max_seconds` / `max_samples` (then stable=False is reported)."""

    min_samples: int = 30
    batch: int = 10
    rel_tol: float = 0.005
    max_seconds: float = 30.0
    max_samples: int = 2000


def sample_until_stable(names: list[str], measure, sampling: Sampling = Sampling(), clock=time.monotonic,
                        on_batch=None) -> tuple[dict, bool]:
    """({name: [samples]}, stable) from calling measure(name) round-robin over NAMES in batches.

    Interleaving means a drift of the machine (clocks, temperature, other load) hits every variant alike;
    the starting variant rotates each round so none is always measured right after the same neighbour.
    """
    samples = {name: [] for name in names}
    if not names:
        return samples, True
    start, previous, rnd = clock(), None, 0
    while True:
        for _ in range(sampling.batch):
            k = rnd % len(names)
            for name in names[k:] + names[:k]:
                samples[name].append(measure(name))
            rnd += 1
        medians = {name: statistics.median(s) for name, s in samples.items()}
        count = len(samples[names[0]])
        if on_batch:
            on_batch(count)
        if count >= sampling.min_samples and previous is not None and all(
                abs(medians[n] - previous[n]) <= sampling.rel_tol * abs(previous[n]) for n in names):
            return samples, True
        if clock() - start >= sampling.max_seconds or count >= sampling.max_samples:
            return samples, False
        previous = medians


def ratio(base: dict, other: dict) -> dict | None:
    """How many times faster OTHER is than BASE (summaries): the ratio of medians, and the range the
    quartiles allow (base q1 / other q3 up to base q3 / other q1)."""
    if not base or not other or not base.get("median_us") or not other.get("median_us"):
        return None
    return {"ratio": base["median_us"] / other["median_us"],
            "lo": base["q1_us"] / other["q3_us"], "hi": base["q3_us"] / other["q1_us"]}


def geomean(values) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def overlaps(a: dict, b: dict) -> bool:
    """Whether two summaries' quartile ranges overlap: their difference is within the spread."""
    return a["q1_us"] <= b["q3_us"] and b["q1_us"] <= a["q3_us"]


def pick_fastest(candidates: dict) -> dict | None:
    """Autotune: {label: (params, summary)} -> the fastest by median, and those tied with it within the spread."""
    timed = {k: v for k, v in candidates.items() if v[1] and v[1].get("median_us") is not None}
    if not timed:
        return None
    best = min(timed, key=lambda k: timed[k][1]["median_us"])
    params, summ = timed[best]
    tied = sorted((k for k, (_, s) in timed.items() if k != best and overlaps(s, summ)),
                  key=lambda k: timed[k][1]["median_us"])
    ranking = sorted(timed, key=lambda k: timed[k][1]["median_us"])
    return {"variant": best, "params": dict(params), "median_us": summ["median_us"], "tied_with": tied,
            "ranking": [{"variant": k, "params": dict(timed[k][0]), "median_us": timed[k][1]["median_us"]}
                        for k in ranking]}


def throughput(median_us: float | None, flops=None, nbytes=None) -> dict:
    """TFLOP/s and GB/s at a median time, for what the case declares."""
    out = {}
    if median_us:
        if flops:
            out["tflops"] = flops / (median_us * 1e-6) / 1e12
        if nbytes:
            out["gbps"] = nbytes / (median_us * 1e-6) / 1e9
    return out
