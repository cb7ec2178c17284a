"""loadscripts/lib/httperf.py on reports captured from real httperf runs here
(tests/data/loadtools/httperf_*.txt: a clean run, client timeouts, refused connections, 404s)."""

import unittest

from toolstest import read  # first: it puts loadscripts/lib on the path
from lib import httperf  # noqa: I100


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
        self.assertLess(httperf.shortfall(r, 200), 0.01)

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

    def test_command_and_shortfall(self):
        cmd = httperf.command("127.0.0.1", 8080, "/work/sleep?ms=2000", 100, 30, 30)
        self.assertEqual(cmd[cmd.index("--num-conns") + 1], "3000")
        self.assertEqual(cmd[cmd.index("--rate") + 1], "100")
        self.assertAlmostEqual(httperf.shortfall({"connection_rate": 50.0}, 100), 0.5)


if __name__ == "__main__":
    unittest.main()
