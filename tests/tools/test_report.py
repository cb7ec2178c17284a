"""The report helpers with missing values (None, the one convention)."""

import unittest

import toolstest  # noqa: F401  (first: it puts loadscripts/ on the path, for package sutlab_lab)
from sutlab_lab import report  # noqa: I100


class Fmt(unittest.TestCase):
    def test_values_and_missing(self):
        self.assertEqual(report.fmt(1.2345, 2), "1.23")
        self.assertEqual(report.fmt(0.0, 0), "0")
        self.assertEqual(report.fmt(2.5, 2, "{}x"), "2.50x")
        self.assertEqual(report.fmt(0.25, 2, "x{}"), "x0.25")
        self.assertEqual(report.fmt(None, 2), report.MISSING)
        self.assertEqual(report.fmt(None, 2, "{}x"), "n/a")  # not "n/ax"

    def test_busy_percent(self):
        # 50,000 req/s at 12 us of CPU each: 0.6 s of CPU per second, 60 % of a core
        self.assertAlmostEqual(report.busy_percent(50000, 12.0), 60.0)
        self.assertAlmostEqual(report.busy_percent(72000, 13.9), 100.08)
        self.assertIsNone(report.busy_percent(None, 12.0))
        self.assertIsNone(report.busy_percent(50000, None))

    def test_ratio(self):
        self.assertEqual(report.ratio(3.0, 2.0), 1.5)
        self.assertIsNone(report.ratio(None, 2.0))
        self.assertIsNone(report.ratio(3.0, None))
        self.assertIsNone(report.ratio(3.0, 0))
        self.assertEqual(report.ratio(0, 3.0), 0.0)


class Medians(unittest.TestCase):
    RUNS = [{"rps": 10.0, "p50": None, "errors": 1},
            {"rps": 30.0, "p50": 2.0, "errors": 0},
            {"rps": 20.0, "p50": 4.0, "errors": 2, "sutlab": None}]

    def test_missing_values_left_out(self):
        m = report.medians(self.RUNS, ("rps", "p50", "sutlab", "redis"))
        self.assertEqual(m, {"rps": 20.0, "p50": 3.0, "sutlab": None, "redis": None, "errors": 3})
        self.assertIsNone(report.median([None, None]))
        self.assertIsNone(report.median([]))

    def test_round_ratios(self):
        a = [{"rps": 20.0}, {"rps": 30.0}, {"rps": 40.0}]
        b = [{"rps": 10.0}, {"rps": 10.0}, {"rps": 40.0}]
        value, text = report.round_ratios(a, b)
        self.assertEqual(value, 3.0)
        self.assertEqual(text, "3.00x (per round: median 2.00x [2.00 3.00 1.00])")

    def test_round_ratios_with_missing(self):
        # round 1 divides by 0, round 2 has no value: no per-round ratio; the medians 5 / 0.5
        value, text = report.round_ratios([{"rps": 5.0}, {"rps": None}], [{"rps": 0.0}, {"rps": 1.0}])
        self.assertEqual(value, 10.0)
        self.assertEqual(text, "10.00x (per round: median n/a [n/a n/a])")
        value, text = report.round_ratios([{"cpu": None}], [{"cpu": None}], "cpu")
        self.assertIsNone(value)
        self.assertEqual(text, "n/a (per round: median n/a [n/a])")


class Table(unittest.TestCase):
    def test_framed(self):
        self.assertEqual(report.table(("run", "req/s", "p50 ms"), [("a", "1", report.fmt(None)), ("bb", "100", "2.0")],
                                      left=1),
                         "| run | req/s | p50 ms |\n"
                         "|-----|-------|--------|\n"
                         "| a   |     1 |    n/a |\n"
                         "| bb  |   100 |    2.0 |")

    def test_columns(self):
        self.assertEqual(report.table(["run", "change", "x"], [["off", "--no-gzip", "1"], ["on/off", "", "n/a"]],
                                      framed=False),
                         "run     change       x\n"
                         "off     --no-gzip    1\n"
                         "on/off             n/a")

    def test_flags_diff(self):
        self.assertEqual(report.flags_diff([("off", "--a=1 --gzip=off"), ("on", "--a=1 --gzip=on")]),
                         ["flags (all runs): --a=1", "off: --gzip=off", "on: --gzip=on"])
        self.assertEqual(report.flags_diff([("off", None), ("on", "")]),
                         ["flags (all runs): -", "off: (same)", "on: (same)"])


if __name__ == "__main__":
    unittest.main()
