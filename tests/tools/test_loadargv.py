"""The load tools' command lines, as each caller builds them: flip (flip/load.py), steps
(loads.Load.command) and bench (bench/common.py). The expected argv are written out by hand from
each tool's documented command line (wrk -t/-c/-d/--timeout/--latency/-s URL -- ARGS; ab -r -k -q
-s -c -t -n; hey -cpus -c -z -t; locust -f --headless --host -u -r -t --csv; openssl s_time
-connect -reuse -time -www -tls1_N; pgbench -n -M -T -c -j -D -f -l; redis-benchmark -h -p -c -n
--csv --threads), so that moving the building into one module cannot change a single word."""

import argparse
import os
import tempfile
import unittest
from unittest import mock

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import LOADSCRIPTS, loadargv, loads  # noqa: E402,I100
from sutlab_lab.bench import common  # noqa: E402
from sutlab_lab.flip import load as flipload  # noqa: E402
from sutlab_lab.services import procs  # noqa: E402
from sutlab_lab.tools import ToolRun  # noqa: E402

WRK = os.path.join(LOADSCRIPTS, "wrk")
BENCH_D = os.path.join(LOADSCRIPTS, "bench.d")
SPRAY = os.path.join(LOADSCRIPTS, "spray")
LOCUSTFILE = os.path.join(LOADSCRIPTS, "locust", "locustfile.py")
WRK_OUT = """Running 1s test @ http://127.0.0.1:1/
  1 threads and 1 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.00ms    0.10ms   2.00ms   90.00%
    Req/Sec     1.00k     0.10k    1.10k    90.00%
  1000 requests in 1.00s, 100.00KB read
Requests/sec:   1000.00
Transfer/sec:    100.00KB
"""


class Captured(Exception):
    pass


def flip_args(**kw):
    base = dict(threads=2, connections=16, cpu_ms=3, sleep_ms=7, echo_bytes=512, load_cpus=None,
                tls_url="https://127.0.0.1:8443", tls_version="1.3", load_workers=1, duration=4.6,
                probe=None)
    base.update(kw)
    return argparse.Namespace(**base)


def bench_args(**kw):
    base = dict(wrk_cpu=1, threads=1, connections=64, pgbench_clients=32, seed=5)
    base.update(kw)
    return argparse.Namespace(**base)


class RunToolSpy:
    """flip/load.py's run_tool: records (argv, env), then returns `output` or stops the caller."""

    def __init__(self, output=None):
        self.calls, self.output = [], output

    def __call__(self, argv, timeout, what, env=None):
        self.calls.append((list(argv), env))
        if self.output is None:
            raise Captured()
        return ToolRun(self.output, 0.0, 0.0)


class Flip(unittest.TestCase):
    URL = "http://127.0.0.1:8080/"

    def test_wrk_scenarios(self):
        a = flip_args()
        self.assertEqual(flipload.wrk_argv(a, self.URL, "articles", 4.6),
                         ["wrk", "-t2", "-c16", "-d5s", "--timeout", "10s", "-s", WRK + "/articles_index.lua",
                          "http://127.0.0.1:8080/", "--", "20", "1"])
        self.assertEqual(flipload.wrk_argv(a, "http://h:9", "cpu", 0.2),
                         ["wrk", "-t2", "-c16", "-d1s", "--timeout", "10s", "-s", WRK + "/plain.lua",
                          "http://h:9/work/cpu?ms=3"])
        self.assertEqual(flipload.wrk_argv(a, "http://h:9", "echo", 10),
                         ["wrk", "-t2", "-c16", "-d10s", "--timeout", "10s", "-s", WRK + "/rpc_echo.lua",
                          "http://h:9/rpc/echo", "--", "512"])
        self.assertEqual(flipload.wrk_argv(a, "http://h:9", "articles-by-author", 3)[-4:],
                         ["--", "20", "1", "author=user1"])

    def test_wrk_run_on_the_load_cpus_with_its_env(self):
        spy = RunToolSpy(WRK_OUT)
        with mock.patch.object(flipload, "run_tool", spy):
            flipload.run_wrk(flip_args(load_cpus="1", threads=1, connections=4), self.URL, "stores-gzip", 2,
                             "tok", None)
        argv, env = spy.calls[0]
        self.assertEqual(argv, ["taskset", "-c", "1", "wrk", "-t1", "-c4", "-d2s", "--timeout", "10s", "-s",
                                WRK + "/stores_by_category.lua", "http://127.0.0.1:8080/"])
        self.assertEqual((env["WRK_SEED"], env["WRK_HEADERS"], env["TOKEN"]), ("1", "Accept-Encoding: gzip", "tok"))

    def test_s_time(self):
        spy = RunToolSpy("12 connections in 2.00s; 6.00 connections/user sec\n")
        with mock.patch.object(flipload, "run_tool", spy):
            r = flipload.run_s_time(flip_args(), "handshake", 2.4, None)
        self.assertEqual(spy.calls[0][0], ["openssl", "s_time", "-connect", "127.0.0.1:8443", "-reuse", "-time",
                                           "2", "-www", "/health_check", "-tls1_3"])
        self.assertEqual(r["rps"], 6.0)
        spy = RunToolSpy("12 connections in 2.00s\n")
        with mock.patch.object(flipload, "run_tool", spy):
            flipload.run_s_time(flip_args(tls_url="https://h", tls_version="1.2"), "cpu", 0.3, None)
        self.assertEqual(spy.calls[0][0], ["openssl", "s_time", "-connect", "h:443", "-reuse", "-time", "1",
                                           "-www", "/work/cpu?ms=3", "-tls1_2"])

    def locust_argv(self, a, scenario, duration, prefix):
        spy = RunToolSpy()
        with mock.patch.object(flipload, "run_tool", spy), mock.patch("os.access", return_value=True), \
                mock.patch.object(procs, "free_port", return_value=40001):
            with self.assertRaises(Captured):
                flipload.run_locust(a, self.URL, scenario, duration, prefix)
        return spy.calls[0]

    def test_locust(self):
        argv, env = self.locust_argv(flip_args(connections=8), "stores-gzip", 5.4, "/o/run1-on")
        self.assertEqual(argv, ["/usr/bin/locust", "-f", LOCUSTFILE, "--headless", "--host", self.URL,
                                "--tags", "stores", "-u", "8", "-r", "8", "-t", "5s", "--csv", "/o/run1-on",
                                "--only-summary", "--exit-code-on-error", "0", "--step-settle", "1"])
        self.assertEqual(env["SUTLAB_ACCEPT_ENCODING"], "gzip")

    def test_locust_distributed_on_the_load_cpus(self):
        argv, _ = self.locust_argv(flip_args(connections=4, load_workers=2, load_cpus="0,1"), "health", 3, "/o/p")
        master = ("/usr/bin/locust --master --master-bind-host 127.0.0.1 --master-bind-port 40001 "
                  "--expect-workers 2 -f %s --headless --host %s --tags health_check -u 4 -r 4 -t 3s --csv /o/p "
                  "--only-summary --exit-code-on-error 0 --step-settle 1" % (LOCUSTFILE, self.URL))
        worker = ("/usr/bin/locust -f %s --worker --master-host 127.0.0.1 --master-port 40001 --step-settle 1"
                  % LOCUSTFILE)
        self.assertEqual(argv, ["taskset", "-c", "0,1", "/bin/sh", "-c",
                                "%s & w0=$!; %s & w1=$!; %s; rc=$?; kill $w0 $w1 2>/dev/null; wait; exit $rc"
                                % (worker, worker, master)])

    def test_probe(self):
        with tempfile.TemporaryDirectory() as d, mock.patch.object(flipload.subprocess, "Popen") as popen:
            p = flipload.Probe(flip_args(probe="/health_check", duration=2.5), "http://h:9/", os.path.join(d, "x"))
            p.out.close()
        self.assertEqual(popen.call_args[0][0], ["wrk", "-t1", "-c1", "-d2s", "--timeout", "10s", "-s",
                                                 WRK + "/plain.lua", "http://h:9/health_check"])


class Steps(unittest.TestCase):
    def test_ab(self):
        self.assertEqual(loads.Load("ab", "http://127.0.0.1:8080/", path="/health_check", timeout=7).command(16, 10, "t"),
                         ["ab", "-r", "-k", "-q", "-s", "7", "-c", "16", "-t", "10", "-n", "2000000",
                          "http://127.0.0.1:8080/health_check"])
        self.assertEqual(loads.Load("ab", "http://h:1", path="/x").command(2, 0, "t")[11], "50000")

    def test_hey(self):
        self.assertEqual(loads.Load("hey", "http://h:1", path="/p", workers=2, cpus=[1]).command(8, 5, "t"),
                         ["taskset", "-c", "1", "hey", "-cpus", "2", "-c", "8", "-z", "5s", "-t", "10", "http://h:1/p"])

    def test_wrk(self):
        self.assertEqual(loads.Load("wrk", "http://h:1", path="/x", script="s.lua", timeout=3).command(64, 5, "t"),
                         ["wrk", "-t1", "-c", "64", "-d", "5s", "--timeout", "3s", "--latency", "-s", "s.lua",
                          "http://h:1/x"])
        self.assertEqual(loads.Load("wrk", "http://h:1/", workers=4, cpus=[0, 1]).command(2, 5, "t"),
                         ["taskset", "-c", "0,1", "wrk", "-t2", "-c", "2", "-d", "5s", "--timeout", "10s",
                          "--latency", "http://h:1/"])

    def test_httperf_through_spray(self):
        self.assertEqual(loads.Load("httperf", "http://127.0.0.1:9", path="/p", timeout=30,
                                    spray_args=["--processes", "2"]).command(100, 3, "t"),
                         ["/usr/bin/python3", SPRAY, "--url", "http://127.0.0.1:9", "--path", "/p", "--rate", "100",
                          "--duration", "3", "--timeout", "30", "--json", "--no-report", "--processes", "2"])

    def test_locust(self):
        self.assertEqual(loads.Load("locust", "http://h:1", locustfiles=["a.py", "b.py"], tags=["x", "y"],
                                    out_dir="/o", locust_args=["--print-responses=/f"]).command(8, 12, "level-8"),
                         ["/usr/bin/locust", "-f", "a.py,b.py", "--headless", "--host", "http://h:1", "-u", "8",
                          "-r", "8", "-t", "12s", "--only-summary", "--exit-code-on-error", "0", "--csv",
                          "/o/level-8", "--tags", "x", "y", "--print-responses=/f"])

    def test_locust_distributed(self):
        with mock.patch.object(procs, "free_port", return_value=40002):
            argv = loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir="/o", workers=2,
                              locust_args=["--x"]).command(4, 6, "t")
        master = ("/usr/bin/locust --master --master-bind-host 127.0.0.1 --master-bind-port 40002 --expect-workers 2 "
                  "-f a.py --headless --host http://h:1 -u 4 -r 4 -t 6s --only-summary --exit-code-on-error 0 "
                  "--csv /o/t --x")
        worker = "/usr/bin/locust -f a.py --worker --master-host 127.0.0.1 --master-port 40002 --x"
        self.assertEqual(argv, ["/bin/sh", "-c", "%s & w0=$!; %s & w1=$!; %s; rc=$?; kill $w0 $w1 2>/dev/null; "
                                "wait; exit $rc" % (worker, worker, master)])


class Cases(unittest.TestCase):
    """The cases' Locust ramp (cases/common.locust_ramp: the locustfile's own --ramp-up) and soak's
    Locust (commands/soak.py: -r users a second, the think time and the fixture users)."""

    def test_locust_ramp(self):
        self.assertEqual(loadargv.locust_ramp(LOCUSTFILE, "http://h:1", 100, 300, 360, "/o/ramp-off",
                                              ["--tags", "rpc_echo"], ["--echo-bytes", "4000"], ["--print-responses",
                                                                                                  "/o/c"]),
                         ["/usr/bin/locust", "-f", LOCUSTFILE, "--headless", "--host", "http://h:1", "--tags",
                          "rpc_echo", "-u", "100", "--ramp-up", "300", "-t", "360s", "--only-summary",
                          "--exit-code-on-error", "0", "--echo-bytes", "4000", "--csv", "/o/ramp-off",
                          "--print-responses", "/o/c"])

    def test_locust_soak(self):
        self.assertEqual(loadargv.locust_soak(["a.py", "b.py"], "http://h:1", 50, 5, 3600, "/o/locust",
                                              ["--think-time", "1-2", "--fixture-users", "10"]),
                         ["/usr/bin/locust", "-f", "a.py,b.py", "--headless", "--host", "http://h:1", "-u", "50",
                          "-r", "5", "-t", "3600s", "--think-time", "1-2", "--fixture-users", "10", "--csv",
                          "/o/locust", "--only-summary"])


class Proxybench(unittest.TestCase):
    def test_wrk_with_headers_on_the_load_core(self):
        """proxybench: one thread, glued -c/-d, its -H options just before the URL."""
        self.assertEqual(loadargv.taskset(1, loadargv.wrk("https://127.0.0.1:9/x", 64, 5,
                                                          options=["-H", "Connection: close"])),
                         ["taskset", "-c", "1", "wrk", "-t1", "-c64", "-d5s", "-H", "Connection: close",
                          "https://127.0.0.1:9/x"])


class Bench(unittest.TestCase):
    def test_wrk_on_a_path(self):
        self.assertEqual(common.wrk_argv(bench_args(), 8081, "/status.txt", 5),
                         ["taskset", "-c", "1", "wrk", "-t1", "-c64", "-d5s", "--latency",
                          "http://127.0.0.1:8081/status.txt"])

    def test_wrk_with_a_script(self):
        self.assertEqual(common.wrk_argv(bench_args(threads=2), 0, None, 3, script_args=["/stores/", 2000, 1]),
                         ["taskset", "-c", "1", "wrk", "-t2", "-c64", "-d3s", "--latency", "-s",
                          BENCH_D + "/random_path.lua", "http://127.0.0.1:0", "--", "/stores/", "2000", "1"])
        self.assertEqual(common.wrk_argv(bench_args(), 7, None, 3, script=common.WRK_LINE_SCRIPT, timeout=30,
                                         connections=8, script_args=[]),
                         ["taskset", "-c", "1", "wrk", "-t1", "-c8", "-d3s", "--timeout=30s", "--latency", "-s",
                          BENCH_D + "/random_line.lua", "http://127.0.0.1:7", "--"])

    def test_pgbench(self):
        self.assertEqual(common.pgbench_argv(bench_args(), "postgresql://db", 4, "x.sql", [("a", 1), ("b", "z")],
                                             "/t/log"),
                         ["taskset", "-c", "1", "/usr/lib/postgresql/15/bin/pgbench", "-n", "-M", "prepared", "-T",
                          "4", "-c", "32", "-j", "1", "--random-seed=5", "-D", "a=1", "-D", "b=z", "-f", "x.sql",
                          "-l", "--log-prefix", "/t/log", "postgresql://db"])
        self.assertEqual(common.pgbench_argv(bench_args(threads=2), "u", 1, "y.sql", []),
                         ["taskset", "-c", "1", "/usr/lib/postgresql/15/bin/pgbench", "-n", "-M", "prepared", "-T",
                          "1", "-c", "32", "-j", "2", "--random-seed=5", "-f", "y.sql", "u"])

    def test_redis_benchmark(self):
        self.assertEqual(common.redis_bench_argv(bench_args(), 6390, 1000, ["GET", "k"]),
                         ["taskset", "-c", "1", "redis-benchmark", "-h", "127.0.0.1", "-p", "6390", "-c", "64",
                          "-n", "1000", "--csv", "GET", "k"])
        self.assertEqual(common.redis_bench_argv(bench_args(threads=2), 1, "N", ("PING",))[-4:],
                         ["--csv", "--threads", "2", "PING"])


if __name__ == "__main__":
    unittest.main()
