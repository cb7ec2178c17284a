"""loadscripts/sutlab_lab/cases/redis_cache.py: its checks against the make-delivery write-up's figures
(001 L47, L53), fed measured tables shaped as steps.csv gives them. Each check must be able to
fail: a table where the cache made no difference, one where the wrong tier limits, and one per
figure where only that figure misses."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, redis_cache  # noqa: E402,I100


def rows(pairs, top_verdict="web"):
    """Steps at 16 and 64 connections; the last (the most users) gets `top_verdict`."""
    out = [{"level": float(level), "rps": float(rps), "busy_web": 0.7, "busy_db": 0.5, "busy_redis": 0.3,
            "busy_load": 0.4, "p99_ms": 20.0, "errors": "0", "verdict": "below limits"} for level, rps in pairs]
    out[-1]["verdict"] = top_verdict
    return out


def runs(db=(1200, 1500), redis=(1700, 1850), redis_verdict="web"):
    return {"PostgreSQL": rows(zip((16, 64), db), "db"), "Redis": rows(zip((16, 64), redis), redis_verdict)}


def verdict(r):
    return checks.verdict(redis_cache.checks(r))


class RedisCache(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        word, line = verdict(runs())
        self.assertEqual(word, "reproduced", line)

    def test_bands_come_from_the_write_ups_ranges(self):
        c = {x.what: x for x in redis_cache.checks(runs())}
        self.assertEqual(c["from Redis, req/s"].band, "1800-1899")
        self.assertEqual(c["from the database, req/s"].band, "1000-1999")
        self.assertEqual(c["Redis / database, req/s"].band, "0.90x-1.90x")  # 1800/1999, 1899/1000
        self.assertEqual(c["Redis / database, req/s"].measured, "1.23x")  # the best steps: 1850 / 1500
        self.assertEqual(sorted(x.what for x in c.values() if x.role == "set"),
                         ["rows in a listing", "the server's cores"])

    def test_the_cache_making_no_difference_is_not_reproduced(self):
        # both rates inside their ranges and the ratio (1.0) inside its band: only the direction fails
        word, line = verdict(runs(db=(1800, 1850), redis=(1800, 1850)))
        self.assertEqual(word, "not reproduced")
        self.assertIn("the cache raises req/s", line)

    def test_another_tier_limiting_is_not_reproduced(self):
        for tier in ("load", "redis", "none", "disturbed"):
            word, line = verdict(runs(redis_verdict=tier))
            self.assertEqual(word, "not reproduced", tier)
            self.assertIn("the tier that limits (write-up web, measured %s)" % tier, line)

    def test_the_tier_is_read_at_the_most_connections(self):
        r = runs(redis=(1850, 1820))  # the best step is the first, the most users the last
        r["Redis"][0]["verdict"] = "load"
        self.assertEqual(verdict(r)[0], "reproduced")
        r["Redis"][1]["verdict"] = "none"
        self.assertEqual(verdict(r)[0], "not reproduced")

    def test_each_figure_alone_missing_is_partly_reproduced(self):
        cases = {"from the database, req/s": runs(db=(900, 990)),          # ratio 1850/990 = 1.87
                 "from Redis, req/s": runs(redis=(1600, 1700))}            # ratio 1700/1500 = 1.13
        for what, r in cases.items():
            word, line = verdict(r)
            self.assertEqual(word, "partly reproduced: 4 of 5", what)
            self.assertIn("missed: %s (" % what, line)

    def test_the_ratio_misses_on_its_own_band(self):
        # Both rates in their ranges always give a ratio in 0.90-1.90 (the band is made of them), so
        # the ratio can only miss with a rate: here both rates miss and so does the ratio, and the
        # count shows the ratio is counted (3 misses, not 2).
        word, line = verdict(runs(db=(5000, 8000), redis=(15000, 22000)))  # 2.75x
        self.assertEqual(word, "partly reproduced: 2 of 5")
        self.assertIn("Redis / database, req/s (write-up 1,800 range / 1,000 range, measured 2.75x)", line)
        # and a cache gain inside the band with both rates off: only the rates miss
        self.assertEqual(verdict(runs(db=(5000, 8000), redis=(9000, 12000)))[0], "partly reproduced: 3 of 5")

    def test_a_failed_step_counts_as_no_rate(self):
        r = runs()
        r["Redis"][1]["rps"] = ""  # steps.csv's empty cell
        c = {x.what: x for x in redis_cache.checks(r)}
        self.assertEqual(c["from Redis, req/s"].measured, "1700")
        self.assertEqual(c["one cached server at its most users: the tier that limits"].measured, "web")


if __name__ == "__main__":
    unittest.main()
