#!/usr/bin/python3
"""Integration tests: the load side of the TPS-trend case, whose JMeter script printed
every response synchronously, and JMeter's ramp-up:
- Locust's --print-responses [FILE|-] (loadscripts/locust/sutlab_responses.py),
- loadscripts/wrk/print_responses.lua,
- Locust's --ramp-up SECONDS (sutlab_locust.py), and the one-line refusals of bad values.

One private sutlab with no database (POST /rpc/echo and /health_check need none); every load is
bounded (seconds) and goes to 127.0.0.1 only. A count of written lines is checked against the load
tool's own count, exactly, and against the server's http_requests_total, which may be higher by
the requests still in flight when the tool stopped (the server answered them, the tool never
counted them): at most one per Locust user or wrk connection.
"""

import csv
import datetime
import os
import re
import shutil
import tempfile
import unittest

from sutlab_testlib import Server, start_class_server, stop_class_server
from test_loadscripts import LOADSCRIPTS, LOCUST, ensure_locust, run, tool_env

NO_DB = ["--db-url", "postgresql://nobody@127.0.0.1:1/none"]  # refused at once, never used
LOCUSTFILE = os.path.join(LOADSCRIPTS, "locust", "locustfile.py")
WRK_SCRIPT = os.path.join(LOADSCRIPTS, "wrk", "print_responses.lua")
ECHO_BYTES = 20


def echo_line(sep):
    """A written line of an echo: status, then sutlab's body around the payload the tool sent
    (Locust's json.dumps puts a space after ':' and ','; wrk's body has none)."""
    return re.compile(r'^200 \{"echo":\{"id":%s\d+,%s"method":%s"echo",%s"payload":%s"x{%d}"\},'
                      r'"at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\}$' % ((sep,) * 5 + (ECHO_BYTES,)))


LOCUST_LINE = echo_line(" ")
WRK_LINE = echo_line("")


def locust_total(stderr):
    """The request count of the Aggregated row of the summary Locust prints when it quits."""
    m = re.search(r"^\s+Aggregated\s+(\d+)\s+\d+\(", stderr, re.M)
    assert m, "no Aggregated row in Locust's summary:\n%s" % stderr[-3000:]
    return int(m.group(1))


def csv_total(prefix):
    with open(prefix + "_stats.csv", newline="") as f:
        return int(next(r for r in csv.DictReader(f) if r["Name"] == "Aggregated")["Request Count"])


def log_time(stderr, message):
    """When Locust logged a line starting with message (its log lines carry milliseconds)."""
    m = re.search(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] .*?: %s" % re.escape(message), stderr, re.M)
    assert m, "Locust did not log %r:\n%s" % (message, stderr[-3000:])
    return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


class PrintResponses(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("wrk"):
            raise unittest.SkipTest("wrk is not installed (apt-get install wrk)")
        ensure_locust()
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-print-")
        cls.srv = start_class_server(Server(extra_args=NO_DB, workers=1), cls.tmp)
        cls.url = "http://127.0.0.1:%d" % cls.srv.port

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp)

    def echoes(self):
        return self.srv.metrics().total("http_requests_total", route="/rpc/echo")

    def locust(self, name, args, env=None, timeout=60):
        """A headless Locust run of locustfile.py in a directory of its own (its cwd) with
        --csv DIR/run: (rc, stdout, stderr, DIR)."""
        cwd = os.path.join(self.tmp, name)
        os.mkdir(cwd)
        argv = [LOCUST, "-f", LOCUSTFILE, "--headless", "--host", self.url, "--only-summary",
                "--csv", os.path.join(cwd, "run")] + list(args)
        rc, out, err = run(argv, timeout=timeout, env=tool_env(env), cwd=cwd)
        return rc, out, err, cwd

    def echo_run(self, name, extra, env=None):
        """2 users on POST /rpc/echo for -t 3s, which Locust 2.12 cuts short (by tenths of a second
        here, by seconds on a busy machine): (stdout, stderr, dir, echoes the server answered)."""
        before = self.echoes()
        rc, out, err, cwd = self.locust(name, ["--tags", "rpc_echo", "--echo-bytes", str(ECHO_BYTES),
                                               "-u", "2", "-r", "2", "-t", "3s"] + list(extra), env=env)
        self.assertEqual(rc, 0, "locust exited %s\n%s" % (rc, err[-3000:]))
        return out, err, cwd, self.echoes() - before

    def assert_one_line_per_request(self, lines, err, cwd, served):
        total = locust_total(err)
        self.assertGreater(total, 10, "too few requests to prove anything")
        self.assertEqual(len(lines), total, "lines written != requests Locust counted")
        bad = [line for line in lines if not LOCUST_LINE.match(line)]
        self.assertEqual(bad, [], "lines that are not '200 <echo body>'")
        # Locust 2.12 writes PREFIX_stats.csv from a greenlet every second and not once more at
        # the end: its Aggregated row misses up to the last second of the run (the summary above
        # is the final count). So the CSV is a lower bound here, not an equal.
        self.assertLessEqual(csv_total(os.path.join(cwd, "run")), len(lines))
        self.assertTrue(len(lines) <= served <= len(lines) + 2,
                        "server answered %d echoes, %d lines written (2 users)" % (served, len(lines)))

    # -- Locust --print-responses

    def test_locust_writes_one_line_per_request_to_a_file(self):
        path = os.path.join(self.tmp, "responses.txt")
        with open(path, "w") as f:
            f.write("left from an earlier run\n")  # truncated at start
        out, err, cwd, served = self.echo_run("file", ["--print-responses", path])
        with open(path) as f:
            lines = f.read().splitlines()
        self.assert_one_line_per_request(lines, err, cwd, served)
        self.assertEqual(out, "", "a FILE was given, yet something went to stdout")

    def test_locust_without_a_value_writes_to_stdout(self):
        out, err, cwd, served = self.echo_run("stdout", ["--print-responses"])
        self.assert_one_line_per_request(out.splitlines(), err, cwd, served)

    def test_locust_takes_the_file_from_the_environment(self):
        path = os.path.join(self.tmp, "from-env.txt")
        out, err, cwd, served = self.echo_run("env", [], env={"SUTLAB_PRINT_RESPONSES": path})
        with open(path) as f:
            self.assert_one_line_per_request(f.read().splitlines(), err, cwd, served)

    def test_locust_without_the_option_writes_nothing(self):
        # --ramp-up 0 is off: -r's rate applies
        out, err, cwd, served = self.echo_run("off", ["--ramp-up", "0"])
        self.assertGreater(locust_total(err), 10)
        self.assertEqual(out, "")
        self.assertEqual([n for n in os.listdir(cwd) if not n.startswith("run_")], [],
                         "files beside the --csv ones")
        log_time(err, "Ramping to 2 users at a rate of 2.00 per second")

    # -- wrk print_responses.lua

    def wrk(self, args):
        before = self.echoes()
        rc, out, err = run(["wrk", "-d1s", "-s", WRK_SCRIPT, self.url] + list(args), timeout=30)
        self.assertEqual(rc, 0, "wrk: %s %s" % (out, err))
        m = re.search(r"^\s*(\d+) requests in ", out, re.M)
        self.assertIsNotNone(m, out)
        return out, int(m.group(1)), self.echoes() - before

    def assert_wrk_lines(self, lines, requests, served, connections):
        self.assertGreater(requests, 50)
        # exact: wrk counts a response and calls response() in one place (response_complete);
        # the requests it abandons in flight at its deadline are in neither count
        self.assertEqual(len(lines), requests, "lines written != wrk's 'N requests'")
        self.assertEqual([line for line in lines if not WRK_LINE.match(line)], [])
        self.assertTrue(requests <= served <= requests + connections, "server answered %d, wrk counted %d "
                        "(%d connections)" % (served, requests, connections))

    def test_wrk_two_threads_write_one_line_per_response_to_a_file(self):
        path = os.path.join(self.tmp, "wrk.txt")
        with open(path, "w") as f:
            f.write("left from an earlier run\n")  # truncated by the first thread
        out, requests, served = self.wrk(["-t2", "-c4", "--", path, str(ECHO_BYTES)])
        with open(path) as f:
            self.assert_wrk_lines(f.read().splitlines(), requests, served, 4)
        self.assertRegex(out, r"(?m)^SUTLAB_WRK \{\"requests\":%d," % requests)

    def test_wrk_writes_to_stdout_by_default(self):
        out, requests, served = self.wrk(["-t1", "-c2", "--", "-", str(ECHO_BYTES)])
        self.assert_wrk_lines([line for line in out.splitlines() if line.startswith("200 ")],
                              requests, served, 2)

    def test_wrk_refuses_a_file_it_cannot_open(self):
        rc, out, err = run(["wrk", "-t1", "-c1", "-d1s", "-s", WRK_SCRIPT, self.url, "--",
                            os.path.join(self.tmp, "no-such-dir", "x")], timeout=30)
        self.assertEqual((rc, out), (2, ""))
        self.assertRegex(err, r"^print_responses\.lua: \S*no-such-dir/x: No such file or directory\n$")

    # -- Locust --ramp-up

    def test_ramp_up_starts_the_users_evenly(self):
        rc, out, err, cwd = self.locust("ramp", ["--tags", "health_check", "--think-time", "0.1",
                                                 "-u", "10", "--ramp-up", "4", "-t", "6s"])
        self.assertEqual(rc, 0, err[-3000:])
        # 10 users over 4 s is 2.5 users/s: Locust starts 2 every 0.8 s, at 0, 0.8, ... 3.2 s (JMeter
        # would start 1 every 0.4 s, the last at 3.6 s). A busy machine only delays the batches.
        start = log_time(err, "Ramping to 10 users at a rate of 2.50 per second")
        spread = log_time(err, "All users spawned") - start
        self.assertTrue(3.0 <= spread <= 6.0, "the 10 users were started over %.2f s, not about 3.2" % spread)
        with open(os.path.join(cwd, "run_stats_history.csv"), newline="") as f:
            users = [(int(r["Timestamp"]), int(r["User Count"])) for r in csv.DictReader(f)
                     if r["Name"] == "Aggregated"]
        counts = [n for _, n in users]
        self.assertEqual(counts, sorted(counts), "the user count went down: %r" % users)
        self.assertEqual(counts[-1], 10, users)
        # one row a second: a linear ramp shows values on the way (about half the users after about
        # 2 s), and reaches 10 some 3 s after the first user; all at once (-r 10) would skip them
        middle = [n for n in counts if 3 <= n <= 7]
        self.assertTrue(middle, "no row with about half the users: %r" % users)
        first = min(t for t, n in users if n > 0)
        full = min(t for t, n in users if n == 10)
        self.assertTrue(2 <= full - first <= 6, "the rows went from users to 10 users in %d s: %r"
                        % (full - first, users))

    # -- bad values: argparse's way, one line naming the option, exit 2, nothing sent

    def test_bad_values_exit_2_with_one_line(self):
        missing = os.path.join(self.tmp, "no-such-dir", "x")
        cases = [("--ramp-up", ["--ramp-up", "-5"], None),
                 ("--ramp-up", ["--ramp-up", "abc"], None),
                 ("--ramp-up", [], {"SUTLAB_RAMP_UP": "soon"}),
                 ("--print-responses", ["--print-responses", missing], None),
                 ("--print-responses", ["--print-responses", self.tmp], None)]  # a directory
        for i, (option, args, env) in enumerate(cases):
            with self.subTest(args=args, env=env):
                before = self.echoes()
                rc, out, err, _ = self.locust("bad%d" % i, ["--tags", "rpc_echo", "-t", "2s"] + args, env=env,
                                              timeout=30)
                lines = err.splitlines()
                self.assertEqual(rc, 2, err[-2000:])
                self.assertEqual(len(lines), 1, err[-2000:])
                self.assertIn("argument %s: " % option, lines[0])
                self.assertEqual(self.echoes(), before, "requests were sent before the refusal")


if __name__ == "__main__":
    unittest.main()
