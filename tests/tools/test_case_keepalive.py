"""loadscripts/sutlab_lab/cases/keepalive.py: its checks against the HAProxy sizing write-up's figures
(002 L37, L41, L61; L27, L29 for the load tool), fed measured tables shaped as steps.csv gives them.
Both counted checks are the bottleneck part and each fails alone; a missing verdict fails; the
scale model budgets the subject's one core and nothing else."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from casetest import assert_each_fails_alone, failing  # noqa: E402,I100
from sutlab_lab.cases import checks, keepalive, scale  # noqa: E402


def rows(pairs, verdict="web"):
    """Steps at 16 and 64 clients, every one with `verdict`."""
    return [{"level": float(level), "rps": float(rps), "busy_web": 0.9, "busy_load": 0.6, "p99_ms": 5.0,
             "errors": "0", "verdict": verdict} for level, rps in pairs]


def runs(ka=(58000, 62000), close=(20000, 21000), ka_verdict="web", close_verdict="web"):
    return {"keep-alive": rows(zip((16, 64), ka), ka_verdict), "close": rows(zip((16, 64), close), close_verdict)}


def verdict(r):
    return checks.verdict(keepalive.checks(r))


def matching_checks():
    return keepalive.checks(runs())  # 21000 / 62000 = 0.34


def alone_checks():
    return {"close / keep-alive, req/s": keepalive.checks(runs(close=(9000, 10000))),  # 0.16
            "both runs' best steps: not the load tool": keepalive.checks(runs(ka_verdict="load"))}


class Keepalive(unittest.TestCase):
    def test_every_figure_matching_is_reproduced(self):
        word, line = verdict(runs())
        self.assertEqual(word, "reproduced", line)
        self.assertIn("bottleneck 2 of 2", line)

    def test_each_counted_check_fails_alone(self):
        assert_each_fails_alone(self, matching_checks(), alone_checks())

    def test_both_are_the_bottleneck_and_no_direction_is_counted(self):
        cs = {x.what: x for x in matching_checks()}
        self.assertEqual(sorted(w for w, x in cs.items() if x.part == "bottleneck"),
                         ["both runs' best steps: not the load tool", "close / keep-alive, req/s"])
        self.assertEqual([x.what for x in cs.values() if x.role == "set"], ["object size"])
        self.assertFalse([x for x in cs.values() if x.role == "direction"])
        # keep-alive making no difference fails the ratio: the band excludes the wrong side
        self.assertEqual(failing(keepalive.checks(runs(close=(58000, 62000)))), ["close / keep-alive, req/s"])

    def test_the_band_is_the_tables_ratio_times_or_over_one_and_a_half(self):
        c = {x.what: x for x in matching_checks()}
        self.assertEqual(c["close / keep-alive, req/s"].band, "0.22x-0.51x")  # 82,000 / 243,000 = 0.337
        self.assertEqual(c["close / keep-alive, req/s"].measured, "0.34x")
        # both ends bounded: the old 0.1-0.6 band held 0.11 and 0.55
        self.assertEqual(verdict(runs(close=(6000, 6800)))[0], "not reproduced")   # 0.11
        self.assertEqual(verdict(runs(close=(30000, 34000)))[0], "not reproduced")  # 0.55

    def test_the_load_tool_limiting_is_not_reproduced(self):
        # ab saturated: the rates are ab's, not the server's, whatever the ratio; any other tier is
        # not the write-up's to name (it names none per row)
        for ka_v, close_v in (("load", "load"), ("web", "load"), ("load", "web"), ("web", "disturbed")):
            word, line = verdict(runs(ka_verdict=ka_v, close_verdict=close_v))
            self.assertEqual(word, "not reproduced", (ka_v, close_v))
            self.assertIn("both runs' best steps: not the load tool [bottleneck]", line)
        for ka_v, close_v in (("none", "web"), ("below limits", "network")):
            self.assertEqual(verdict(runs(ka_verdict=ka_v, close_verdict=close_v))[0], "reproduced", (ka_v, close_v))

    def test_a_missing_verdict_fails_not_drops(self):
        r = runs()
        del r["close"][1]["verdict"]  # the close run's best step
        self.assertEqual(failing(keepalive.checks(r)), ["both runs' best steps: not the load tool"])
        r = runs()
        r["keep-alive"][1]["verdict"] = ""  # steps.csv's empty cell
        self.assertEqual(failing(keepalive.checks(r)), ["both runs' best steps: not the load tool"])
        self.assertEqual(failing(keepalive.checks({"keep-alive": [], "close": []})),
                         ["close / keep-alive, req/s", "both runs' best steps: not the load tool"])

    def test_the_verdicts_are_read_at_the_best_steps(self):
        r = runs()
        r["close"][0]["verdict"] = "load"  # 16 clients, not the close run's best step
        self.assertEqual(verdict(r)[0], "reproduced")
        r["close"][1]["verdict"] = "load"
        self.assertEqual(verdict(r)[0], "not reproduced")

    def test_a_failed_step_counts_as_no_rate(self):
        r = runs()
        r["keep-alive"][1]["rps"] = ""  # steps.csv's empty cell: the 16-client step is the best
        c = {x.what: x for x in keepalive.checks(r)}
        self.assertEqual(c["close / keep-alive, req/s"].measured, "0.36x")  # 21000 / 58000

    def test_the_model_budgets_the_subjects_one_core(self):
        m = scale.Model(keepalive.TOPOLOGY, keepalive.S, (), keepalive.WHY_S)
        self.assertEqual(m.budgets(), {"web": 0.5})
        self.assertEqual(m.rows_fitted(), set())
        self.assertEqual([x.measured for x in m.set_checks()], ["0.5"])
        self.assertEqual(scale.Model(keepalive.TOPOLOGY, 1, full=True).budgets(), {})


if __name__ == "__main__":
    unittest.main()
