"""What the tests of the case modules (test_case_*.py) share: a measured row shaped as steps.csv
gives it, and the check that each counted figure, missed alone, gives "partly reproduced" naming it."""

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks  # noqa: E402,I100

CAPACITY = {"web": 2.0, "db": 2.0, "load": 1.0}  # cores: --workers 2, PostgreSQL on both, one load thread


def row(level, rps, mean_ms, db, web, load, verdict="db"):
    """A steps.csv row: each tier's CPU share (0..1) as cpu_TIER_pct (% of one core) and
    capacity_TIER (cores), as a case reads them back."""
    out = {"level": float(level), "rps": float(rps), "mean_ms": float(mean_ms), "p99_ms": 3.0 * mean_ms,
           "verdict": verdict, "errors": "0"}
    for tier, share in (("db", db), ("web", web), ("load", load)):
        out["cpu_%s_pct" % tier] = share * 100 * CAPACITY[tier]
        out["capacity_%s" % tier] = CAPACITY[tier]
        out["busy_%s" % tier] = min(1.0, share + 0.05)
    return out


def assert_each_miss_alone(test, case_checks, matching, misses):
    """For each (figure, measured table) of `misses`, the table in which only that figure misses:
    the verdict is "partly reproduced: N-1 of N" and names it."""
    counted = len([c for c in case_checks(matching) if c.role != "set"])
    for what, table in misses:
        cs = case_checks(table)
        word, line = checks.verdict(cs)
        test.assertEqual(word, "partly reproduced: %d of %d" % (counted - 1, counted), what)
        test.assertEqual([c.what for c in cs if c.ok is False], [what])  # a `set` check (None) is no miss
        test.assertIn(what + " (write-up ", line)
