"""The think time of the blog write-up's scenario, derived from its own rows (write-up 000): the
write-up publishes no scenario.py and no wait time (000's figure reference lists both among what
the write-up does not state), but every scenario row leaves time per request that its latency
does not explain.

A closed user spends per request its latency R plus a wait Z, so with N users at X requests/s
Little's law gives N = X x (R + Z), and Z = N / X - R (000 D-L; citations: docs/bottlenecks.md).
The single-endpoint runs of the same write-up leave Z ~ 0, the scenario rows 0.36-0.43 s: the
scenario waited.

No Locust import: the unit tests load this file alone, and blog_writeup.py takes its default from
THINK_S.
"""

import statistics

# The write-up's scenario rows (`locust -f scenario.py`): (line of the write-up's text, step of
# 000's figure reference, users, rps, ms). L217 repeats L186 and is left out. The ms statistic is not
# stated (mean, median?); Little's law holds for the mean, which is assumed.
SCENARIO_ROWS = (
    ("L168", "17 scenario", 8, 17, 98),
    ("L169", "17 scenario", 32, 32, 628),
    ("L180", "19 count removed", 8, 19, 63),
    ("L181", "19 count removed", 32, 55, 200),
    ("L186", "20 users' name index", 32, 63, 144),
    ("L221", "23 two web servers, ALB", 32, 34, 507),
    ("L227", "25 db.m5.2xlarge", 64, 120, 165),
)


def wait_per_request(users, rps, latency_ms):
    """Z = N / X - R, in seconds: the time per request a closed user spends outside the measured
    latency."""
    if users <= 0 or rps <= 0 or latency_ms < 0:
        raise ValueError("users and rps must be > 0, latency >= 0: %r, %r, %r" % (users, rps, latency_ms))
    return users / rps - latency_ms / 1000.0


def per_row(rows=SCENARIO_ROWS):
    """[(line, step, Z seconds)] for each row."""
    return [(line, step, wait_per_request(n, x, ms)) for line, step, n, x, ms in rows]


def derived_think_time(rows=SCENARIO_ROWS):
    """The scenario's think time: the median of the rows' Z (seconds), robust to the one row
    (L221, two web servers behind the ALB) that leaves more than the others."""
    return statistics.median(z for _, _, z in per_row(rows))


THINK_S = round(derived_think_time(), 3)
