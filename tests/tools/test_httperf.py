"""loadscripts/sutlab_lab/httperf.py on reports captured from real httperf runs here
(tests/data/loadtools/httperf_*.txt: a clean run, client timeouts, refused connections, 404s)."""

import unittest

from toolstest import read  # first: it puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import httperf, spray  # noqa: I100


def report(name):
    return httperf.parse(read("httperf_%s.txt" % name))


class Parse(unittest.TestCase):
    def test_clean_run(self):
        r = report("report")
        self.assertEqual((r["connections"], r["requests"], r["replies"]), (400, 400, 400))
        self.assertEqual(r["status"]["2xx"], 400)
        self.assertEqual(sum(r["errors"].values()), 0)
        self.assertAlmostEqual(r["rps"], 400 / 1.996, places=1)
        self.assertAlmostEqual(r["connection_rate"], 200.4)
        self.assertEqual((r["lifetimes_ms"], r["codes"]), ({}, {}))  # no -v -v, no --print-reply

    def test_client_timeouts(self):
        r = report("timeout")
        self.assertEqual(r["replies"], 0)
        self.assertEqual(r["errors"]["client-timo"], 20)
        self.assertEqual(r["rps"], 0.0)

    def test_refused(self):
        r = report("refused")
        self.assertEqual(r["errors"]["connrefused"], 20)
        self.assertEqual(r["requests"], 0)

    def test_non_2xx(self):
        r = report("non2xx")
        self.assertEqual(r["status"]["4xx"], 50)
        self.assertEqual(r["status"]["2xx"], 0)

    def test_not_a_report(self):
        with self.assertRaises(ValueError):
            httperf.parse("httperf: connection failed\n")

    def test_detail_histogram_and_codes(self):
        # a 1-thread pool answering 300 ms sleeps at 10/s, 1 s timeout: 4 replies, 6 timeouts
        r = report("detail")
        self.assertEqual((r["connections"], r["replies"]), (10, 4))
        self.assertEqual(r["lifetimes_ms"], {303.5: 1, 503.5: 1, 703.5: 1, 904.5: 1})
        self.assertEqual(r["codes"], {200: 4})
        self.assertEqual(r["errors"]["client-timo"], 6)

    def test_command(self):
        cmd = httperf.command("127.0.0.1", 8080, "/work/sleep?ms=2000", 100, 30, 30)
        self.assertEqual(cmd[cmd.index("--num-conns") + 1], "3000")
        self.assertEqual(cmd[cmd.index("--rate") + 1], "100")
        self.assertNotIn("--print-reply=header", cmd)
        cmd = httperf.command("h", 1, "/", 25, 30, 30, detail=True, client=(2, 4))
        self.assertEqual(cmd[cmd.index("--num-conns") + 1], "750")
        self.assertEqual(cmd[cmd.index("--client") + 1], "2/4")
        self.assertIn("--print-reply=header", cmd)
        self.assertEqual(cmd.count("-v"), 2)


class Spray(unittest.TestCase):
    """sutlab_lab/spray.py: httperf's reports added up and read as vegeta reports them."""

    def test_processes_keep_each_under_fd_setsize(self):
        self.assertEqual(spray.processes_for(10, 10), 1)
        self.assertEqual(spray.processes_for(100, 30), 4)  # 3000 in flight at worst
        for argv in spray.commands("h", 1, "/", 100, 30, 30):
            self.assertEqual(argv[argv.index("--rate") + 1], "25")
        shares = [int(a[a.index("--num-conns") + 1]) for a in spray.commands("h", 1, "/", 200, 5, 10)]
        self.assertEqual((len(shares), sum(shares)), (3, 1000))  # 333.3 each: the shares add up

    def test_summary_counts_timeouts_at_the_timeout(self):
        s = spray.summary(spray.merge([report("detail")]), 10, 1, 1)
        self.assertEqual((s["requests"], s["success"]), (10, 0.4))
        self.assertEqual(s["codes"], {200: 4, 0: 6})
        self.assertEqual(s["errors"], {"timeout": 6})
        self.assertAlmostEqual(s["mean"], (303.5 + 503.5 + 703.5 + 904.5 + 6 * 1000) / 10)
        self.assertEqual((s["p50"], s["p95"], s["max"]), (1000.0, 1000.0, 1000.0))
        self.assertIn("Success       [ratio]                    40.00%", spray.text(s, 1))

    def test_merge_adds_processes(self):
        one = report("detail")
        s = spray.summary(spray.merge([one, report("refused")]), 20, 1, 1)
        self.assertEqual(s["requests"], 10 + 20)
        self.assertEqual(s["errors"], {"timeout": 6, "refused": 20})
        self.assertEqual(s["codes"][0], 26)
        self.assertEqual(s["p50"], 1000.0)  # refused ones have no latency: 4 replies + 6 timeouts


if __name__ == "__main__":
    unittest.main()
