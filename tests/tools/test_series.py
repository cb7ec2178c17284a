"""What plot reads: the kind of a file, per-second series and user levels from Locust's and hey's
CSV files (captured, tests/data/loadtools), the flags stored next to a run."""

import os
import shutil
import tempfile
import unittest

from toolstest import data  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import series  # noqa: I100


class Sniff(unittest.TestCase):
    def test_every_captured_kind(self):
        kinds = {"locust_stats_history.csv": "locust-history", "locust_seconds.csv": "locust-seconds",
                 "hey_requests.csv": "hey-csv", "hey_timeout.csv": "hey-csv", "wrk_latency.txt": "wrk",
                 "wrk_script.txt": "wrk", "wrk_timeout.txt": "wrk", "hey_report.txt": "hey",
                 "hey_refused.txt": "hey", "ab_report.txt": "ab", "ab_length.txt": "ab",
                 "locust_stats.csv": None, "metrics.txt": None, "pgbench_run.txt": None}
        for name, kind in kinds.items():
            with self.subTest(name=name):
                self.assertEqual(series.sniff(data(name)), kind)
        self.assertIsNone(series.sniff(data("no-such-file")))

    def test_reports_read_by_kind(self):
        self.assertEqual(series.read_report(data("ab_report.txt"), "ab")["requests"], 2000)
        self.assertEqual(series.read_report(data("hey_report.txt"), "hey")["requests"], 2000)
        self.assertEqual(series.read_report(data("wrk_latency.txt"), "wrk")["requests"], 104545)


class LocustSeries(unittest.TestCase):
    def test_seconds_and_steps_files_win(self):
        s = series.read_locust(data("locust_stats_history.csv"))
        self.assertEqual(s.source, data("locust_seconds.csv"))
        self.assertEqual(s.col("t"), [0, 1, 2, 3, 4])
        self.assertEqual(s.col("users"), [1, 1, 1, 2, 2])
        self.assertEqual(s.col("requests"), [15, 59, 74, 72, 65])
        self.assertAlmostEqual(s.rows[0]["error_pct"], 100.0 * 8 / 15)
        self.assertEqual(s.rows[3]["p99"], 72.84)
        self.assertEqual(s.steps, [(1, 66.5, 1.5, 29.0, 42.0, 43.609, 2), (2, 65.0, 5.7, 35.0, 49.93, 58.462, 1)])

    def test_history_alone(self):
        s = series.read_locust_history(data("locust_stats_history.csv"))
        # rates from the running totals; the first row has no interval before it
        self.assertEqual(s.col("t"), [1, 2, 3, 4])
        self.assertEqual(s.col("rps"), [53.0, 71.0, 71.0, 90.0])
        self.assertEqual(s.col("failures_per_s"), [26.0, 32.0, 35.0, 53.0])
        self.assertEqual(s.col("p95"), [20.0, 17.0, 26.0, 27.0])
        self.assertIn("cumulative", s.pct_note)

    def test_levels_from_seconds_without_a_steps_file(self):
        tmp = tempfile.mkdtemp()
        try:
            shutil.copy(data("locust_seconds.csv"), os.path.join(tmp, "run_seconds.csv"))
            s = series.read_locust(os.path.join(tmp, "run_seconds.csv"), settle=1)
        finally:
            shutil.rmtree(tmp)
        # the first second of each level left out: level 1 = seconds 1, 2; level 2 = second 4
        self.assertEqual([(u, rps, n) for u, rps, _, _, _, _, n in s.steps], [(1, 66.5, 2), (2, 93.84, 1)])
        self.assertEqual(s.steps[0][3], 29.5)  # the median of the per-second p95s, 30 and 29

    def test_one_level_is_no_step_run(self):
        rows = [{"t": t, "users": 5, "rps": 1.0, "p50": 1.0, "p95": 1.0, "p99": 1.0, "error_pct": 0.0,
                 "requests": 1} for t in range(5)]
        self.assertIsNone(series.steps_from_rows(rows, 1))

    def test_flags_next_to_the_run(self):
        with open(data("locust_flags.txt")) as f:
            self.assertEqual(series.flags_next_to(data("locust_stats_history.csv")), f.read().strip())


class HeySeries(unittest.TestCase):
    def test_requests_binned_by_second(self):
        s = series.read_hey_csv(data("hey_requests.csv"))
        self.assertEqual(len(s.rows), 1)  # 400 requests, all within the first second
        r = s.rows[0]
        self.assertEqual((r["requests"], r["rps"], r["error_pct"]), (400, 400.0, 0.0))
        self.assertEqual((r["p50"], r["p95"], r["p99"]), (0.2, 0.7, 3.4))  # ranks 200, 380, 396

    def test_failed_requests_are_not_in_the_csv(self):
        self.assertEqual(series.read_hey_csv(data("hey_timeout.csv")).rows, [])


if __name__ == "__main__":
    unittest.main()
