"""--fail-if (loadscripts/sutlab_lab/thresholds.py): every form of EXPR parsed or refused, each scope
read on the right figures, and what a violated threshold prints."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import stepped, thresholds  # noqa: E402,I100


def parse(text):
    return thresholds.parse(text)


class ScopedRatio(unittest.TestCase):
    """bench: every run has a ratio of its own (sutlab against its reference)."""

    def test_each_run_is_read(self):
        t = thresholds.parse("ratio>=0.8", scoped_ratio=True)
        runs = {"static.health_check": {"ratio": 0.9}, "static.status.txt": {"ratio": 0.7}}
        self.assertEqual(t.violations(runs), [("static.status.txt", 0.7)])
        one = thresholds.parse("ratio>=0.8@static.health_check", scoped_ratio=True)
        self.assertEqual(one.violations(runs), [])
        self.assertEqual(thresholds.parse("ratio>=0.8@delivery.cache-on", scoped_ratio=True).violations(runs),
                         [("delivery.cache-on", None)])  # a run that was not measured

    def test_flip_keeps_the_runs_only(self):
        with self.assertRaises(ValueError):
            thresholds.parse("ratio>=0.8@static.health_check")


class Parse(unittest.TestCase):
    def test_latency_units_become_ms(self):
        self.assertEqual(parse("p99<50ms").limit, 50.0)
        self.assertEqual(parse("p99<50").limit, 50.0)
        self.assertEqual(parse("p95<=2s").limit, 2000.0)
        self.assertEqual(parse("mean<250us").limit, 0.25)
        self.assertEqual(parse("p50>.5ms").op, ">")

    def test_shares_take_percent_or_a_fraction(self):
        self.assertAlmostEqual(parse("errors<0.1%").limit, 0.001)
        self.assertAlmostEqual(parse("errors<0.001").limit, 0.001)
        self.assertAlmostEqual(parse("success>=99%").limit, 0.99)

    def test_scopes(self):
        self.assertEqual(parse("rps>=1000@8").scope, "8")
        self.assertEqual(parse("p99<20ms@on").scope, "on")
        self.assertEqual(parse("ratio>=1.5").subjects(["off", "on", "run"]), ["run"])
        self.assertEqual(parse("p99<1").subjects(["2", "4", "run"]), ["2", "4"])
        self.assertEqual(parse("p99<1@run").subjects(["2", "4", "run"]), ["run"])

    def test_malformed_expressions_are_refused(self):
        for bad in ("p99", "p99<", "<50ms", "p99<<50", "p99 < 50ms", "p999<5", "p99<5xs", "errors<5ms",
                    "errors<150%", "rps>=10/s", "ratio>=1.5@on", "p99=5", "rps>=1e9", ""):
            with self.assertRaises(ValueError, msg=bad):
                parse(bad)

    def test_a_command_without_a_ratio_refuses_one(self):
        import argparse
        with self.assertRaises(argparse.ArgumentTypeError):
            thresholds.argument(without=("ratio",))("ratio>=2")
        self.assertEqual(thresholds.argument()("ratio>=2").metric, "ratio")


class Judge(unittest.TestCase):
    SUBJECTS = {"2": {"rps": 900.0, "p99": 4.0, "errors": 0.0}, "8": {"rps": 1100.0, "p99": 30.0, "errors": 0.02},
                "run": {"rps": 1000.0, "p99": 30.0, "errors": 0.01}}

    def judge(self, *exprs):
        lines = []
        code = thresholds.judge([parse(e) for e in exprs], self.SUBJECTS, say=lines.append)
        return code, lines

    def test_met_is_zero_and_one_line(self):
        self.assertEqual(self.judge("p99<50ms", "rps>=500", "errors<5%"), (0, ["fail-if: all 3 thresholds met"]))
        self.assertEqual(self.judge(), (0, []))

    def test_each_violation_is_a_line_naming_where_and_what(self):
        code, lines = self.judge("p99<10ms", "rps>=1000@run", "errors<=1%@8")
        self.assertEqual(code, 1)
        self.assertEqual(lines, ["fail-if p99<10ms violated at 8: p99 is 30.000 ms",
                                 "fail-if errors<=1%@8 violated at 8: errors is 2.000%"])
        code, lines = self.judge("rps>1000@run")
        self.assertEqual(lines, ["fail-if rps>1000@run violated: rps is 1000"])

    def test_a_figure_not_measured_violates(self):
        code, lines = self.judge("p95<1s", "rps>=1@16")
        self.assertEqual(code, 1)
        self.assertIn("fail-if p95<1s violated at 2: p95 is not measured", lines)
        self.assertIn("fail-if rps>=1@16 violated at 16: rps is not measured", lines)


class StepSubjects(unittest.TestCase):
    def test_levels_and_the_run(self):
        rows = [{"level": 2, "rps": 100.0, "p50": 1.0, "p95": 2.0, "p99": 3.0, "mean": 1.5, "errors": {}},
                {"level": 8, "rps": 300.0, "p50": 2.0, "p95": 9.0, "p99": 12.0, "mean": 3.0, "errors": {"timeout": 30}},
                {"level": 16, "failed": True}]
        s = stepped.subjects(rows, 10)
        self.assertEqual(set(s), {"2", "8", "run"})
        self.assertAlmostEqual(s["8"]["errors"], 30 / 3000.0)
        self.assertEqual(s["2"]["errors"], 0.0)
        self.assertAlmostEqual(s["run"]["rps"], 200.0)           # 4,000 requests over 20 s
        self.assertAlmostEqual(s["run"]["errors"], 30 / 4000.0)
        self.assertEqual(s["run"]["p99"], 12.0)                  # the worst level's
        self.assertIsNone(s["run"]["success"])
        # a level that answered nothing but errors is all errors
        s = stepped.subjects([{"level": 2, "rps": 0.0, "errors": {"refused": 5}}], 10)
        self.assertEqual(s["2"]["errors"], 1.0)


if __name__ == "__main__":
    unittest.main()
