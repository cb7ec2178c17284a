"""The command lines loadscripts/steps runs (loadscripts/lib/loads.py): what each tool is told."""

import unittest

import toolstest  # noqa: F401 - puts loadscripts/lib on the path
from lib import loads  # noqa: E402,I100


class Commands(unittest.TestCase):
    def test_ab_holds_the_level_for_the_seconds(self):
        argv = loads.Load("ab", "http://127.0.0.1:8080/", path="/health_check", timeout=7).command(16, 10, "t")
        self.assertEqual(argv[argv.index("-c") + 1], "16")
        self.assertEqual(argv[argv.index("-t") + 1], "10")
        self.assertEqual(argv[argv.index("-s") + 1], "7")
        self.assertIn("-r", argv)  # a reset is counted, not the end of the run
        # the request cap is sized to the run: -t alone stops at 50,000, a huge cap costs seconds
        self.assertEqual(int(argv[argv.index("-n") + 1]), 10 * loads.AB_MAX_RPS)
        self.assertEqual(argv[-1], "http://127.0.0.1:8080/health_check")

    def test_wrk_script_and_path(self):
        argv = loads.Load("wrk", "http://h:1", path="/x", script="s.lua").command(64, 5, "t")
        self.assertEqual(argv[argv.index("-s") + 1], "s.lua")
        self.assertEqual(argv[-1], "http://h:1/x")
        self.assertEqual(argv[argv.index("-c") + 1], "64")

    def test_locust_failures_are_not_a_failed_tool(self):
        argv = loads.Load("locust", "http://h:1", locustfiles=["a.py", "b.py"], tags=["x", "y"],
                          out_dir="/o").command(8, 12, "level-8")
        self.assertEqual(argv[argv.index("--exit-code-on-error") + 1], "0")
        self.assertEqual(argv[argv.index("-u") + 1], "8")
        self.assertEqual(argv[argv.index("-t") + 1], "12s")
        self.assertEqual(argv[argv.index("--csv") + 1], "/o/level-8")
        self.assertEqual(argv[argv.index("-f") + 1], "a.py,b.py")
        self.assertEqual(argv[argv.index("--tags") + 1:argv.index("--tags") + 3], ["x", "y"])

    def test_httperf_rate_goes_through_spray(self):
        argv = loads.Load("httperf", "http://127.0.0.1:9", path="/p", timeout=30).command(100, 3, "t")
        self.assertTrue(argv[1].endswith("loadscripts/spray"), argv)
        self.assertEqual(argv[argv.index("--rate") + 1], "100")
        self.assertEqual(argv[argv.index("--duration") + 1], "3")
        self.assertEqual(argv[argv.index("--timeout") + 1], "30")
        self.assertEqual(argv[argv.index("--url") + 1], "http://127.0.0.1:9")
        self.assertIn("--json", argv)

    def test_spray_summary_is_a_row(self):
        out = ('spray: ...\n{"codes": {"0": 30, "200": 60, "502": 10}, "duration_s": 10.0, "errors": '
               '{"refused": 20, "timeout": 10}, "mean": 5.0, "p50": 4.0, "p95": 9.0, "p99": 12.0, '
               '"requests": 100, "success": 0.6, "unsent": 0}\n')
        r = loads.Load("httperf", "http://h:1").result(out, "t", 10)
        self.assertAlmostEqual(r["rps"], 7.0)  # replies of any status over the test
        self.assertEqual(r["errors"], {"502": 10, "refused": 20, "timeout": 10})
        self.assertEqual((r["success"], r["shortfall"], r["p99"]), (0.6, 0.0, 12.0))
        with self.assertRaises(ValueError):
            loads.Load("httperf", "http://h:1").result("httperf: died\n", "t", 10)

    def test_unknown_tool(self):
        with self.assertRaises(ValueError):
            loads.Load("siege", "http://h:1")


if __name__ == "__main__":
    unittest.main()
