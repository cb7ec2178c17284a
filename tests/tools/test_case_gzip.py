"""loadscripts/sutlab_lab/cases/gzip.py's checks on measured tables shaped as steps.csv gives them: the
write-up gives no figure, and the direction follows from the bandwidth cap the lab picks, so
nothing is counted and the verdict is "illustrated" whatever the run measured; the direction and
the ratio are shown as set."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, gzip  # noqa: E402,I100


def rows(*pairs, **extra):
    return [dict({"level": float(level), "rps": float(rps), "p99_ms": 50.0, "busy_web": 0.1, "busy_load": 0.04,
                  "verdict": "below limits"}, **extra) for level, rps in pairs]


def runs(off, on):
    return {"off": rows((16, off), (64, off - 1)), "on": rows((16, on - 9), (64, on))}


def matching_checks():
    return gzip.checks(runs(51, 315))


def alone_checks():
    return {}  # nothing is counted: no run can miss a check of it


class Gzip(unittest.TestCase):
    def test_nothing_is_counted_so_it_is_illustrated(self):
        cs = matching_checks()
        self.assertEqual([x.role for x in cs], ["set"])
        self.assertEqual(cs[0].measured, "51 -> 315 (6.2x)")
        self.assertTrue(all(x.cite.startswith("001 L") for x in cs))
        word, line = checks.verdict(cs)
        self.assertEqual(word, "illustrated")
        self.assertIn("shown, not reproduced", line)
        self.assertEqual(checks.exit_code(word), 1)

    def test_the_cap_decides_the_direction_so_no_run_changes_the_verdict(self):
        # gzip faster, no faster, slower, or not measured at all: the verdict is the same word
        for off, on in ((51, 315), (300, 320), (300, 300), (315, 51)):
            self.assertEqual(checks.verdict(gzip.checks(runs(off, on)))[0], "illustrated", (off, on))
        r = runs(51, 315)
        r["on"] = [dict(x, rps="") for x in r["on"]]
        cs = gzip.checks(r)
        self.assertEqual((checks.verdict(cs)[0], cs[0].measured), ("illustrated", "n/a"))

    def test_the_set_check_says_why(self):
        c = matching_checks()[0]
        self.assertIn("--rate 10mbit", c.band)
        self.assertIn("compression ratio", c.band)
        self.assertEqual((c.writeup, c.cite), ("much better, no figure", "001 L123, L127"))

    def test_whatever_tier_limits_is_not_counted(self):
        # the write-up names no limiting tier (001 L123, L127): the capped link, the load tool or a
        # disturbed machine is shown in the measured table, never counted
        for tier in ("network", "load", "web", "disturbed"):
            r = {side: [dict(x, verdict=tier) for x in rs] for side, rs in runs(51, 315).items()}
            self.assertFalse([x for x in gzip.checks(r) if x.role != "set"], tier)


if __name__ == "__main__":
    unittest.main()
