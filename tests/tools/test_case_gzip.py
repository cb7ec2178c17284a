"""loadscripts/sutlab_lab/cases/gzip.py's checks on measured tables shaped as steps.csv gives them: the
write-up gives no figure, so its one counted check is the direction, and the on / off ratio the
bandwidth cap sets is shown, not counted."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, gzip  # noqa: E402,I100


def rows(*pairs, **extra):
    return [dict({"level": float(level), "rps": float(rps), "p99_ms": 50.0, "busy_web": 0.1, "busy_load": 0.04,
                  "verdict": "below limits"}, **extra) for level, rps in pairs]


def runs(off, on):
    return {"off": rows((16, off), (64, off - 1)), "on": rows((16, on - 9), (64, on))}


class Gzip(unittest.TestCase):
    def test_faster_with_gzip_is_reproduced(self):
        cs = gzip.checks(runs(51, 315))
        self.assertEqual(checks.verdict(cs)[0], "reproduced")
        self.assertEqual([x.role for x in cs], ["direction", "set"])
        self.assertEqual(cs[1].measured, "315 / 51 = 6.2x")
        self.assertTrue(all(x.cite.startswith("001 L") for x in cs))

    def test_the_ratio_the_cap_sets_is_not_counted(self):
        # a gain far below the old ">= 2x" (the compression ratio under the cap) still goes the write-up's way
        self.assertEqual(checks.verdict(gzip.checks(runs(300, 320)))[0], "reproduced")

    def test_gzip_making_no_difference_is_not_reproduced(self):
        word, line = checks.verdict(gzip.checks(runs(300, 300)))
        self.assertEqual(word, "not reproduced")
        self.assertIn("gzip on against off", line)

    def test_gzip_slower_or_unmeasured_is_not_reproduced(self):
        # the write-up names no limiting tier, so the direction is the check a wrong result fails
        self.assertEqual(checks.verdict(gzip.checks(runs(315, 51)))[0], "not reproduced")
        r = runs(51, 315)
        r["on"] = [dict(x, rps="") for x in r["on"]]
        cs = gzip.checks(r)
        self.assertEqual(checks.verdict(cs)[0], "not reproduced")
        self.assertEqual(cs[1].measured, "n/a")

    def test_the_tier_is_not_counted_the_write_up_names_none(self):
        # (b) for this case: whatever tier limits (the capped link, the load tool, a disturbed
        # machine), the verdict rests on the direction, the write-up naming no tier (001 L123, L127)
        for tier in ("network", "load", "web", "disturbed"):
            r = {side: [dict(x, verdict=tier) for x in rs] for side, rs in runs(51, 315).items()}
            self.assertEqual(checks.verdict(gzip.checks(r))[0], "reproduced", tier)
            self.assertEqual(checks.verdict(gzip.checks(dict(r, on=r["off"])))[0], "not reproduced", tier)

    def test_no_figure_so_never_partly_reproduced(self):
        # (c) for this case: "all but one figure match" has no figure to miss; the one counted
        # check failing gives "not reproduced", never "partly"
        cs = gzip.checks(runs(300, 299))
        self.assertEqual([x.role for x in cs if x.role != "set"], ["direction"])
        self.assertEqual(checks.verdict(cs)[0], "not reproduced")


if __name__ == "__main__":
    unittest.main()
