"""loadscripts/sutlab_lab/cases/keepalive.py: its checks against the HAProxy sizing write-up's figures
(002 L61, L37, L41, L29), fed measured tables shaped as steps.csv gives them. Each check must be
able to fail: a table where keep-alive made no difference, tables where the load tool (or another
tier) limits, and one where only the ratio misses."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import checks, keepalive  # noqa: E402,I100


def rows(pairs, verdict="web"):
    """Steps at 16 and 64 clients, every one with `verdict`."""
    return [{"level": float(level), "rps": float(rps), "busy_web": 0.9, "busy_load": 0.6, "p99_ms": 5.0,
             "errors": "0", "verdict": verdict} for level, rps in pairs]


def runs(ka=(58000, 62000), close=(20000, 21000), ka_verdict="web", close_verdict="web"):
    return {"keep-alive": rows(zip((16, 64), ka), ka_verdict), "close": rows(zip((16, 64), close), close_verdict)}


def verdict(r):
    return checks.verdict(keepalive.checks(r))


class Keepalive(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        word, line = verdict(runs())  # 21000 / 62000 = 0.34
        self.assertEqual(word, "reproduced", line)

    def test_the_band_is_a_third_times_or_over_one_and_a_half(self):
        c = {x.what: x for x in keepalive.checks(runs())}
        self.assertEqual(c["close / keep-alive, req/s"].band, "0.22x-0.50x")
        self.assertEqual(c["close / keep-alive, req/s"].measured, "0.34x")
        self.assertEqual([x.what for x in c.values() if x.role == "set"], ["object size"])
        # both ends bounded: the old 0.1-0.6 band held 0.11 and 0.55
        self.assertEqual(verdict(runs(close=(6000, 6800)))[0], "partly reproduced: 2 of 3")   # 0.11
        self.assertEqual(verdict(runs(close=(30000, 34000)))[0], "partly reproduced: 2 of 3")  # 0.55

    def test_keep_alive_making_no_difference_is_not_reproduced(self):
        word, line = verdict(runs(close=(58000, 62000)))
        self.assertEqual(word, "not reproduced")
        self.assertIn("keep-alive raises req/s", line)

    def test_the_load_tool_limiting_is_not_reproduced(self):
        # ab saturated: the rates are ab's, not the server's, whatever the ratio
        for ka_v, close_v in (("load", "load"), ("web", "load"), ("load", "web"), ("none", "web"),
                              ("web", "disturbed")):
            word, line = verdict(runs(ka_verdict=ka_v, close_verdict=close_v))
            self.assertEqual(word, "not reproduced", (ka_v, close_v))
            self.assertIn("the tier that limits both runs' best steps", line)

    def test_the_tier_is_read_at_the_best_steps(self):
        r = runs()
        r["close"][0]["verdict"] = "load"  # 16 clients, not the close run's best step
        self.assertEqual(verdict(r)[0], "reproduced")
        r["close"][1]["verdict"] = "load"
        self.assertEqual(verdict(r)[0], "not reproduced")

    def test_the_ratio_alone_missing_is_partly_reproduced(self):
        word, line = verdict(runs(close=(9000, 10000)))  # 10000 / 62000 = 0.16
        self.assertEqual(word, "partly reproduced: 2 of 3")
        self.assertIn("missed: close / keep-alive, req/s (", line)
        self.assertIn("measured 0.16x", line)

    def test_a_failed_step_counts_as_no_rate(self):
        r = runs()
        r["keep-alive"][1]["rps"] = ""  # steps.csv's empty cell
        c = {x.what: x for x in keepalive.checks(r)}
        self.assertEqual(c["keep-alive raises req/s"].measured, "21000 -> 58000")


if __name__ == "__main__":
    unittest.main()
