"""Progress lines (loadscripts/sutlab_lab/progress.py): plain lines every few seconds in a log, one line
rewritten in place on a terminal, the server's req/s and errors from /metrics, an httperf run's
replies from its output."""

import io
import os
import tempfile
import time
import unittest

import toolstest  # puts loadscripts/ on the path (package sutlab_lab); text_server
from sutlab_lab import progress  # noqa: E402,I100


class Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self._tty = tty

    def isatty(self):
        return self._tty


class Ticker(unittest.TestCase):
    def setUp(self):
        self.every, self.tty_every = progress.EVERY, progress.TTY_EVERY
        progress.EVERY, progress.TTY_EVERY = 0.2, 0.1

    def tearDown(self):
        progress.EVERY, progress.TTY_EVERY = self.every, self.tty_every

    def test_plain_lines_in_a_log(self):
        out = Stream(False)
        calls = []
        with progress.Ticker("step 1/2: ab at 8", 10, sample=lambda: calls.append(1) or "900 req/s", stream=out):
            time.sleep(0.7)
        lines = out.getvalue().splitlines()
        self.assertGreaterEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r"^step 1/2: ab at 8: 0/10 s, 900 req/s$")
        self.assertNotIn("\r", out.getvalue())

    def test_one_line_rewritten_on_a_terminal_and_cleared(self):
        out = Stream(True)
        with progress.Ticker("spray: 100 req/s", 10, sample=lambda: None, stream=out):
            time.sleep(0.45)
        text = out.getvalue()
        self.assertGreaterEqual(text.count("\r"), 3, repr(text))
        self.assertNotIn("\n", text)
        self.assertTrue(text.endswith("\r"), repr(text))  # the line is blanked at the end
        self.assertIn("spray: 100 req/s: 0/10 s", text)

    def test_a_short_run_is_silent_and_a_failing_sample_is_no_figure(self):
        out = Stream(False)
        with progress.Ticker("x", 2, sample=lambda: 1 / 0, stream=out):
            time.sleep(0.3)
        self.assertEqual(out.getvalue(), "")
        out = Stream(False)
        with progress.Ticker("x", 10, sample=lambda: 1 / 0, stream=out):
            time.sleep(0.3)
        self.assertRegex(out.getvalue().splitlines()[0], r"^x: 0/10 s$")


class Samples(unittest.TestCase):
    def test_server_rate_reads_the_request_counter(self):
        counts = {"n": 0}

        def text():
            counts["n"] += 1
            return ("# TYPE http_requests_total counter\n"
                    'http_requests_total{route="/x",method="GET",code="200"} %d\n'
                    'http_requests_total{route="/x",method="GET",code="503"} %d\n'
                    % (1000 * counts["n"], 5 * counts["n"]))

        sample = progress.server_rate(toolstest.text_server(self, text))
        self.assertIsNone(sample())  # the baseline
        time.sleep(0.5)
        text = sample()
        rate = float(text.split()[0])
        self.assertGreater(rate, 1005 / 0.8)
        self.assertLess(rate, 1005 / 0.45)
        self.assertTrue(text.endswith(", 5 errors"), text)
        self.assertIsNone(progress.server_rate("http://127.0.0.1:1")())

    def test_replies_of_httperf_processes(self):
        d = tempfile.mkdtemp(prefix="sutlab-progress-")
        paths = [os.path.join(d, "a"), os.path.join(d, "b")]
        with open(paths[0], "w") as f:
            f.write("RH0:HTTP/1.1 200 OK\nRH0:Date: x\nRH1:HTTP/1.1 502 Bad Gateway\n")
        with open(paths[1], "w") as f:
            f.write("RH0:HTTP/1.1 200 OK\n")
        self.assertEqual(progress.replies_in(paths)(), "3 replies, 1 errors")
        self.assertIsNone(progress.replies_in([os.path.join(d, "none")])())


if __name__ == "__main__":
    unittest.main()
