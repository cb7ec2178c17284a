"""What the tests of the case modules (test_case_*.py) share: a measured row shaped as steps.csv
gives it, a fabricated scale model, and the check that each counted check fails alone."""

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import calibrate, checks, scale  # noqa: E402,I100

CAPACITY = {"web": 2.0, "db": 2.0, "load": 1.0}  # cores: --workers 2, PostgreSQL on both, one load thread


def row(level, rps, mean_ms, db, web, load, verdict="db", capacity=None):
    """A steps.csv row: each tier's CPU share (0..1) as cpu_TIER_pct (% of one core) and
    capacity_TIER (cores), as a case reads them back."""
    capacity = dict(CAPACITY, **(capacity or {}))
    out = {"level": float(level), "rps": float(rps), "mean_ms": float(mean_ms), "p99_ms": 3.0 * mean_ms,
           "verdict": verdict, "errors": "0"}
    for tier, share in (("db", db), ("web", web), ("load", load)):
        out["cpu_%s_pct" % tier] = share * 100 * capacity[tier]
        out["capacity_%s" % tier] = capacity[tier]
        out["busy_%s" % tier] = min(1.0, share + 0.05)
    return out


def model(case, s=0.35, own=None, **measured):
    """The case module's scale model as a run would make it, with what calibration would measure
    (own: calibrate.Own; measured: work_us, count_us_per_row ...)."""
    m = scale.Model(case.TOPOLOGY, s, getattr(case, "FITS", ()), "a test's")
    m.measured.update(own=own or calibrate.Own(400.0, 300.0, 2.0, {"/api/articles": 0.3}, 100.0), **measured)
    return m


def counted(cs):
    return sorted(c.what for c in cs if c.role != "set")


def failing(cs):
    return [c.what for c in cs if c.ok is False]


def assert_each_fails_alone(test, matching, alone):
    """matching: the checks of a run where every counted check holds; alone: {what: the checks of a
    run where only `what` fails}, one for every counted check of `matching`."""
    test.assertEqual(failing(matching), [], "the matching run misses")
    test.assertEqual(sorted(alone), counted(matching))
    for what, cs in alone.items():
        test.assertEqual(failing(cs), [what])
        word, line = checks.verdict(cs)
        test.assertIn(what + " [", line)
        bottleneck = next(c for c in cs if c.what == what).part == "bottleneck"
        test.assertEqual(word, "not reproduced" if bottleneck else word)
