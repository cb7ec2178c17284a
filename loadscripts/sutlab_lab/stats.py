"""The one percentile rule of the tooling: nearest rank.

The q-th percentile of n values is the ceil(q/100 * n)-th smallest (1-based, at least the first),
so q = 100 is the maximum and no value is ever interpolated: every percentile printed is a
latency that some request really had. bench's pgbench p50/p99, the hey series of plot and the
per-second files of the Locust recorder all use it.
"""

import itertools
import math
from fractions import Fraction


def nearest_rank(n, q):
    """The 1-based rank of the q-th percentile (0 < q <= 100) among n >= 1 values."""
    if n < 1:
        raise ValueError("no values")
    if not 0 < q <= 100:
        raise ValueError("percentile %r is not in (0, 100]" % (q,))
    # Fraction(str(q)): 99.9/100*1000 is 999.0000000000001 in floats, and its ceil one rank high
    return min(n, max(1, math.ceil(Fraction(str(q)) * n / 100)))


def percentile(sorted_values, q):
    """The q-th percentile of an ascending list, or None when it is empty."""
    if not sorted_values:
        return None
    return sorted_values[nearest_rank(len(sorted_values), q) - 1]


def counts_percentile(counts, q):
    """The q-th percentile of values given as {value: how many times}, or None when empty."""
    total = sum(counts.values())
    if total <= 0:
        return None
    rank = nearest_rank(total, q)
    values = sorted(counts)
    running = itertools.accumulate(counts[v] for v in values)
    return next(v for v, seen in zip(values, running) if seen >= rank)
