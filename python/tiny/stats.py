"""Interval arithmetic the tiny world's score tables share. Nothing here knows a task or its
truth, so code on a training path may import it (test/tiny/lineage.test.ts checks that)."""

from __future__ import annotations

import math

# The 0.975 quantile of the standard normal: a two-sided 95% interval.
Z = 1.959964


def interval(xs: list[float]) -> tuple[float, list[float]]:
    """The mean of `xs` and its 95% normal interval (sample standard deviation over sqrt(n)),
    bounds rounded to 4 places; a single value has a zero-width interval."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    h = Z * sd / math.sqrt(n)
    return mean, [round(mean - h, 4), round(mean + h, 4)]
