"""loadscripts/sutlab_lab/cases/delivery_scaleout.py: its checks against the make-delivery write-up's
sequence (001 L47-L111), fed fabricated tables shaped as steps.csv gives them: one that matches every
figure, ones where a fix is absent or the tier is wrong (not reproduced), and one per figure where
only that figure misses (partly reproduced, naming it)."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, delivery_scaleout as d  # noqa: E402,I100

import casetest  # noqa: E402,I100

CAPACITY = {"web": 2.0, "lb": 1.0, "load": 1.0}


def row(level, rps, verdict="web", web=0.8, lb=0.6, load=0.5, errors="0"):
    out = {"level": float(level), "rps": float(rps), "mean_ms": 150.0, "errors": errors, "verdict": verdict}
    for tier, share in (("web", web), ("lb", lb), ("load", load)):
        out["cpu_%s_pct" % tier], out["capacity_%s" % tier] = share * 100 * CAPACITY[tier], CAPACITY[tier]
    return out


def runs(change=None):
    """A table matching every figure; change: {stage index: {row field: value}} over a stage's last row."""
    r = {"1 server, cache": [row(1000, 1850), row(2000, 1860, errors="200:900 read timeout:40"),
                             row(3000, 1840, errors="connect timeout:3 read timeout:500")],
         "1 server, no cache": [row(1000, 1000, verdict="db")],
         "nginx + 2 servers": [row(1000, 4200, "load", web=0.57, lb=0.63, load=0.95)],
         "load tool doubled": [row(1000, 6500, "web", web=0.80, lb=0.98, load=0.70)],
         "nginx doubled": [row(1000, 6700, "web", web=0.80, lb=0.575, load=0.6)],
         "3,000 users": [row(3000, 6600, "web", web=0.87, lb=0.6, load=0.6)]}
    for i, fields in (change or {}).items():
        r[d.STAGES[i][0]][-1].update(fields)
    return r


def verdict(r):
    return checks.verdict(d.checks(r))


def scaled(r, stages, factor):
    for i in stages:
        r[d.STAGES[i][0]][-1]["rps"] *= factor
    return r


class DeliveryScaleout(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        word, line = verdict(runs())
        self.assertEqual(word, "reproduced", line)
        c = {x.what: x for x in d.checks(runs())}
        self.assertEqual(c["nginx + 2 servers / 1 server, cache, TPS"].band, "1.54x-3.46x")  # 4152/1800 x/÷1.5
        self.assertEqual(c["cache / no cache, TPS"].band, "0.90x-1.90x")  # 1800/1999, 1899/1000
        self.assertEqual(c["read timeouts past 1,000 users"].measured, "0 at 1,000 -> 500 at 3,000")
        self.assertEqual(sorted(x.what for x in c.values() if x.role == "set"), ["think time", "tier budgets"])

    def test_every_check_cites_a_line_of_the_write_up(self):
        for x in d.checks(runs()):
            self.assertRegex(x.cite, r"^001 L\d+", x.what)

    def test_read_timeouts_are_counted_by_their_kind(self):
        self.assertEqual(d.timeouts({"errors": "connect timeout:3 read timeout:500 reset:2"}), 500)
        self.assertEqual(d.timeouts({"errors": "timeout:7"}), 0)
        self.assertEqual(d.timeouts({"errors": ""}), 0)

    def test_the_fixes_absent_are_not_reproduced(self):
        # the cache gives nothing: both rates in the ratio's band (0.97x), the direction fails
        word, line = verdict(runs({1: {"rps": 1900.0}}))
        self.assertEqual(word, "not reproduced")
        self.assertIn("the cache raises TPS (write-up", line)
        # the second server gives nothing, and the load tool doubled gives nothing
        for stage, what in ((2, "two servers behind nginx raise TPS"), (3, "the load tool doubled raises TPS")):
            r = runs()
            r[d.STAGES[stage][0]][-1]["rps"] = r[d.STAGES[stage - 1 if stage == 3 else 0][0]][0]["rps"] * 0.9
            word, line = verdict(r)
            self.assertEqual(word, "not reproduced", what)
            self.assertIn(what + " (write-up", line)

    def test_the_tier_wrong_is_not_reproduced(self):
        for stage, wrong, what in ((0, "load", "1 server, cache, 3000 users: the tier that limits"),
                                   (2, "web", "nginx + 2 servers, 1000 users: the tier that limits"),
                                   (2, "disturbed", "nginx + 2 servers, 1000 users: the tier that limits"),
                                   (3, "lb", "load tool doubled: not nginx the limit"),
                                   (3, "disturbed", "load tool doubled: not nginx the limit"),
                                   (5, "load", "3,000 users, 3000 users: the tier that limits")):
            word, line = verdict(runs({stage: {"verdict": wrong}}))
            self.assertEqual(word, "not reproduced", (stage, wrong))
            self.assertIn(what + " (write-up", line)

    def test_each_figure_alone_missing_is_partly_reproduced(self):
        no_cache = runs({1: {"rps": 900.0}})  # 1850 / 900 = 2.06x, over 1.90x
        first = runs({1: {"rps": 650.0}})  # cache 1200 / 650 = 1.85x, then 4200 / 1200 = 3.5x
        first["1 server, cache"][0]["rps"] = 1200.0
        misses = [("cache / no cache, TPS", no_cache),
                  ("read timeouts past 1,000 users", runs({0: {"errors": "read timeout:499"}})),
                  ("nginx + 2 servers / 1 server, cache, TPS", first),
                  ("load tool doubled / nginx + 2 servers, TPS", scaled(runs(), (3, 4, 5), 1.6)),
                  ("nginx doubled / load tool doubled, TPS", scaled(runs(), (4, 5), 1.6)),
                  ("3,000 users / nginx doubled, TPS", scaled(runs(), (5,), 1.6))]
        misses[1][1]["1 server, cache"][0]["errors"] = "read timeout:50"  # 499 < 10 x 50
        for i, tier, fig, _ in d.SHARES:
            low = fig[0] if isinstance(fig, tuple) else fig
            misses.append(("%s: %s CPU" % (d.STAGES[i][0], tier), runs({i: {"cpu_%s_pct" % tier: max(
                0.0, low - 20) * CAPACITY[tier]}})))
        casetest.assert_each_miss_alone(self, d.checks, runs(), misses)

    def test_no_read_timeouts_at_the_most_users_miss(self):
        word, line = verdict(runs({0: {"errors": "reset:40"}}))
        self.assertEqual(word, "partly reproduced: 21 of 22")
        self.assertIn("read timeouts past 1,000 users (write-up surged, measured 0 at 1,000 -> 0 at 3,000)", line)

    def test_a_stage_not_run_fails_its_checks(self):
        r = runs()
        del r["3,000 users"]
        c = {x.what: x for x in d.checks(r)}
        self.assertFalse(c["3,000 users / nginx doubled, TPS"].ok)
        self.assertFalse(c["3,000 users, 3000 users: the tier that limits"].ok)
        self.assertEqual(checks.verdict(d.checks(r))[0], "not reproduced")


if __name__ == "__main__":
    unittest.main()
