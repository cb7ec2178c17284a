"""The command lines loadscripts/steps runs (loadscripts/sutlab_lab/loads.py): what each tool is told, and
how a step names its load."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab import loadargv, loads, panels, plots, stepped  # noqa: E402,I100
from sutlab_lab.cases import common  # noqa: E402
from sutlab_lab.commands import steps  # noqa: E402


class Commands(unittest.TestCase):
    def test_ab_holds_the_level_for_the_seconds(self):
        argv = loads.Load("ab", "http://127.0.0.1:8080/", path="/health_check", timeout=7).command(16, 10, "t")
        self.assertEqual(argv[argv.index("-c") + 1], "16")
        self.assertEqual(argv[argv.index("-t") + 1], "10")
        self.assertEqual(argv[argv.index("-s") + 1], "7")
        self.assertIn("-r", argv)  # a reset is counted, not the end of the run
        # the request cap is sized to the run: -t alone stops at 50,000, a huge cap costs seconds
        self.assertEqual(int(argv[argv.index("-n") + 1]), 10 * loadargv.AB_MAX_RPS)
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

    def test_httperfs_target_follows_sprays_rule(self):
        argv = loads.Load("httperf", "http://[::1]:9", path="/p").command(100, 3, "t")
        self.assertEqual(argv[argv.index("--url") + 1], "http://[::1]:9")
        with self.assertRaises(ValueError):  # spray speaks plain HTTP alone
            loads.Load("httperf", "https://127.0.0.1:9", path="/p").command(100, 3, "t")
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


class Workers(unittest.TestCase):
    """--load-workers and --load-cpus: what each tool is told."""

    def test_wrk_threads_and_hey_cpus(self):
        argv = loads.Load("wrk", "http://h:1", workers=2).command(64, 5, "t")
        self.assertIn("-t2", argv)
        self.assertIn("-t1", loads.Load("wrk", "http://h:1").command(64, 5, "t"))
        self.assertIn("-t1", loads.Load("wrk", "http://h:1", workers=4).command(1, 5, "t"))  # one connection
        argv = loads.Load("hey", "http://h:1", workers=2).command(8, 5, "t")
        self.assertEqual(argv[argv.index("-cpus") + 1], "2")

    def test_locust_as_a_master_and_its_workers(self):
        argv = loads.Load("locust", "http://h:1", locustfiles=["a.py"], tags=["x"], out_dir="/o", workers=3,
                          locust_args=["--print-responses=/f"]).command(8, 12, "level-8")
        self.assertEqual(argv[:2], ["/bin/sh", "-c"])
        script = argv[2]
        self.assertEqual(script.count("--worker"), 3)
        self.assertEqual(script.count(" & "), 3)
        master = script.rsplit("; ", 4)[0].rsplit("; ", 1)[1]
        self.assertTrue(master.startswith("/usr/bin/locust --master "), master)
        self.assertTrue(script.endswith("; rc=$?; kill $w0 $w1 $w2 2>/dev/null; wait; exit $rc"), script)
        for part in ("--master ", "--expect-workers 3", "--headless", "-u 8", "--csv /o/level-8", "--tags x",
                     "--master-bind-host 127.0.0.1", "-f a.py"):
            self.assertIn(part, master)
        port = master.split("--master-bind-port ", 1)[1].split()[0]
        self.assertEqual(script.count("--master-port %s" % port), 3)
        self.assertEqual(script.count("--print-responses=/f"), 4)  # every worker prints its own
        # one worker: the single process, as before
        self.assertNotIn("--master", loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir="/o")
                         .command(8, 12, "t"))

    def test_a_cpu_budget_is_taskset(self):
        argv = loads.Load("ab", "http://h:1", path="/x", cpus=[1]).command(2, 3, "t")
        self.assertEqual(argv[:4], ["taskset", "-c", "1", "ab"])
        argv = loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir="/o", workers=2, cpus=[0, 1]).command(
            2, 3, "t")
        self.assertEqual(argv[:4], ["taskset", "-c", "0,1", "/bin/sh"])

    def test_tools_without_workers_refuse_them(self):
        for tool in ("ab", "httperf"):
            with self.assertRaises(ValueError):
                loads.Load(tool, "http://h:1", workers=2)


class WhatRan(unittest.TestCase):
    """What a step's load requested, as the steps page, steps.png, cpu.png and prometheus.png name
    it, and what a level counts (steps.png's x axis): a wrk script's request, not the --path it
    ignores (the count-pagination case's stages read "wrk /health_check")."""
    LOCUSTFILE = os.path.join(toolstest.ROOT, "loadscripts", "locust", "locustfile.py")

    def stage_load(self, argv):
        """The load steps makes of a case's stage options (steps.check's workers: one)."""
        args = steps.arguments(argv)
        args.load_workers = 1
        return steps.make_load(args, "/o")

    def test_a_cases_wrk_script_is_named_by_its_request(self):
        what = self.stage_load(common.load("wrk", (8, 32), 10, script="articles_index.lua")).describe({})
        self.assertEqual(what, "wrk -s loadscripts/wrk/articles_index.lua: GET /api/articles?limit=20&offset=0")
        what = self.stage_load(common.load("wrk", (8,), 3, script="stores_by_category.lua")).describe(
            {"WRK_HEADERS": "Accept-Encoding: gzip", "HOME": "/"})
        self.assertEqual(what, "wrk -s loadscripts/wrk/stores_by_category.lua: GET /stores?categoryId=<random>, "
                               "Accept-Encoding: gzip")

    def test_a_path_and_a_script_flip_does_not_know(self):
        self.assertEqual(loads.Load("ab", "http://h:1", path="/health_check").describe(), "ab: GET /health_check")
        self.assertEqual(loads.Load("httperf", "http://h:1", path="/work/sleep?ms=2000").describe(),
                         "spray (httperf): GET /work/sleep?ms=2000 (the spray write-up's 2 s block)")
        self.assertEqual(loads.Load("wrk", "http://h:1", path="/x", script="/tmp/mine.lua").describe({}),
                         "wrk -s /tmp/mine.lua: the requests the script makes (URL path /x)")
        plain = os.path.join(toolstest.ROOT, "loadscripts", "wrk", "plain.lua")
        self.assertEqual(loads.Load("wrk", "http://h:1", path="/x", script=plain).describe({"WRK_METHOD": "POST"}),
                         "wrk -s loadscripts/wrk/plain.lua: POST /x")

    def test_locust_tags_and_scenarios(self):
        load = loads.Load("locust", "http://h:1", locustfiles=[self.LOCUSTFILE], tags=["rpc_echo"],
                          locust_args=["--echo-bytes=512"])
        self.assertEqual(load.describe(), "Locust --tags rpc_echo: POST /rpc/echo (512-byte payload)")
        load = loads.Load("locust", "http://h:1", locustfiles=[self.LOCUSTFILE], tags=["list_articles", "profile"])
        self.assertEqual(load.describe(), "Locust --tags list_articles,profile: GET /api/articles?limit=20&offset=0; "
                                          "task profile")
        self.assertEqual(loads.Load("locust", "http://h:1", locustfiles=[self.LOCUSTFILE]).describe(),
                         "Locust -f loadscripts/locust/locustfile.py: the requests of its users' scenario")

    def test_every_tool_says_what_a_level_counts(self):
        self.assertEqual(sorted(loads.LEVEL_UNITS), sorted(loads.TOOLS))
        self.assertEqual((loads.LEVEL_UNITS["wrk"], loads.LEVEL_UNITS["locust"]), ("connections", "users"))

    def test_the_pngs_carry_them(self):
        drawn = []

        def save(fig, plt, path, size):
            drawn.append((fig._suptitle.get_text(), [ax.get_xlabel() for ax in fig.axes]))
            plt.close(fig)
        rows = [{"level": 8, "rps": 100.0, "p95": 2.0, "verdict": "web", "tiers": {"web": {"cores_used": 0.5}}}]
        with mock.patch.object(plots, "_save", save):
            stepped.plot(rows, ["web"], "/o/steps.png", "wrk -s x.lua: GET /a", "connections")
            panels.plot([(0.5, 8, {"web": 0.5}), (1.0, 8, {"web": 0.4})], ["web"], "/o/cpu.png", "CPU",
                        "seconds", ["wrk -s x.lua: GET /a"])
        self.assertEqual(drawn[0][0], "wrk -s x.lua: GET /a")
        self.assertIn("level: connections (under each, the tier that limits)", drawn[0][1])
        self.assertEqual(drawn[1][0], "CPU\nwrk -s x.lua: GET /a")


SECONDS_HEAD = "timestamp,users,requests,failures,rps,failures_per_s,p50_ms,p95_ms,p99_ms,max_ms,mean_ms"


class LocustStep(unittest.TestCase):
    """A Locust step's percentiles are those of every response in the step's seconds, from
    the recorder's per-second histograms, not a median of per-second values."""

    def write(self, lines, histograms=True):
        d = tempfile.mkdtemp(prefix="sutlab-loads-")
        self.addCleanup(shutil.rmtree, d)
        prefix = os.path.join(d, "level-4")
        with open(prefix + "_seconds.csv", "w") as f:
            f.write(SECONDS_HEAD + (",histogram" if histograms else "") + "\n")
            for ts, n, p99, mx, hist in lines:
                f.write("%d,4,%d,0,%d,0,1.00,1.00,%.2f,%.2f,1.0%s\n"
                        % (ts, n, n, p99, mx, ("," + hist) if histograms else ""))
        open(prefix + "_failures.csv", "w").close()
        return d

    # three seconds of 100 responses at 1 ms, then one with 95 at 1 ms and 5 at 500 ms: every
    # second's own p99 but the last is 1 ms, so their median is 1 ms; of the 400 responses the
    # 396th is one of the 500 ms ones
    SECONDS = [(100, 100, 1.0, 1.0, "1:100"), (101, 100, 1.0, 1.0, "1:100"), (102, 100, 1.0, 1.0, "1:100"),
               (103, 100, 500.0, 500.0, "1:95 500:5")]

    def test_the_p99_of_the_steps_responses(self):
        d = self.write(self.SECONDS)
        r = loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir=d).result("", "level-4", 4)
        self.assertEqual(r["p99"], 500.0)
        self.assertEqual(r["p50"], 1.0)
        self.assertEqual(r["rps"], 100)

    def test_the_warm_up_seconds_are_left_out_of_the_histogram(self):
        seconds = [(99, 100, 900.0, 900.0, "900:100")] + self.SECONDS
        d = self.write(seconds)
        r = loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir=d).result("", "level-4", 4, skip_s=1)
        self.assertEqual(r["p99"], 500.0)
        self.assertEqual(r["p50"], 1.0)

    def test_a_file_without_histograms_keeps_the_old_reading(self):
        d = self.write(self.SECONDS, histograms=False)
        r = loads.Load("locust", "http://h:1", locustfiles=["a.py"], out_dir=d).result("", "level-4", 4)
        self.assertEqual(r["p99"], 1.0)  # the median of 1, 1, 1, 500


if __name__ == "__main__":
    unittest.main()
