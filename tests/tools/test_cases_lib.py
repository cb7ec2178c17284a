"""loadscripts/sutlab_lab/cases: each case's checks against the write-up's figures, on rows shaped as
steps.csv gives them; the verdict line."""

import os
import tempfile
import unittest
import unittest.mock

import toolstest  # noqa: F401 - puts loadscripts/ on the path (package sutlab_lab)
from sutlab_lab.cases import CASES, PLANNED, checks, common, keepalive, spray, texts, tps_trend  # noqa: E402,I100
from sutlab_lab import ramps  # noqa: E402,I100


def rows(*pairs, **extra):
    return [dict({"level": float(level), "rps": float(rps)}, **extra) for level, rps in pairs]


class LoadOptions(unittest.TestCase):
    """case --load-workers/--load-cpus reach every stage's steps, the workers only where the
    stage's tool can have them."""

    def ctx(self, **kw):
        import tempfile
        return common.Context("x", tempfile.mkdtemp(prefix="sutlab-case-"), **kw)

    def test_workers_where_the_tool_scales(self):
        c = self.ctx(load_workers="2", load_cpus="0-1")
        self.assertEqual(c.load_args(["--tool", "locust", "--levels", "8"]),
                         ["--load-workers", "2", "--load-cpus", "0-1"])
        self.assertEqual(c.load_args(["--tool", "wrk"]), ["--load-workers", "2", "--load-cpus", "0-1"])
        self.assertEqual(c.load_args(["--tool", "ab"]), ["--load-cpus", "0-1"])
        self.assertEqual(c.load_args(["--tool", "httperf"]), ["--load-cpus", "0-1"])

    def test_nothing_by_default(self):
        self.assertEqual(self.ctx().load_args(["--tool", "locust"]), [])
        self.assertEqual(self.ctx(load_workers="1").load_args(["--tool", "locust"]), [])


class FakeLab(common.Context):
    """A context whose lab and stepped runs are recorded, not run."""

    def __init__(self, out):
        super().__init__("x", out, progress=lambda msg: None)
        self.calls = []

    def lab(self, *args):
        self.calls.append(("lab",) + args)

    def steps(self, label, args, in_client=None, env=None, cores=None):
        self.calls.append(("steps", label, tuple(args), tuple(sorted((env or {}).items()))))
        return [{"level": 8.0, "rps": float(len(self.calls))}]


class Stages(unittest.TestCase):
    """The case's stages: arms flipped on the engine, each a stepped run; steps in this process."""

    def out(self):
        import tempfile
        return tempfile.mkdtemp(prefix="sutlab-case-")

    def test_flipped_restarts_each_arm_then_takes_the_lab_down(self):
        ctx = FakeLab(self.out())
        runs = common.flipped(ctx, ["--workers", "2"], (("off", ["--no-gzip"]), ("on", ["--gzip"])),
                              ["--tool", "wrk"], size="small", reseed=True, up_args=["--rate", "1mbit"],
                              env={"WRK_HEADERS": "h"})
        self.assertEqual(ctx.calls, [
            ("lab", "down"), ("lab", "up", "--rate", "1mbit", "--size", "small", "--", "--workers", "2"),
            ("lab", "seed", "small"),
            ("lab", "restart", "--", "--workers", "2", "--no-gzip"), ("steps", "off", ("--tool", "wrk"), (("WRK_HEADERS", "h"),)),
            ("lab", "restart", "--", "--workers", "2", "--gzip"), ("steps", "on", ("--tool", "wrk"), (("WRK_HEADERS", "h"),)),
            ("lab", "down")])
        self.assertEqual(runs, {"off": [{"level": 8.0, "rps": 5.0}], "on": [{"level": 8.0, "rps": 7.0}]})

    def test_flipped_takes_the_lab_down_when_a_stage_fails(self):
        ctx = FakeLab(self.out())

        def failing(label, args, **kw):
            ctx.calls.append(("steps", label))
            raise common.RunError("wrk failed")
        ctx.steps = failing
        with self.assertRaisesRegex(common.RunError, "wrk failed"):
            common.flipped(ctx, [], (("a", ["--x"]), ("b", ["--y"])), ["--tool", "wrk"])
        self.assertEqual(ctx.calls[-2:], [("steps", "a"), ("lab", "down")])

    def test_stage_refusal_is_a_run_error_with_its_line_in_the_log(self):
        import os
        log = os.path.join(self.out(), "commands.log")
        before = dict(os.environ)
        affinity = os.sched_getaffinity(0)
        with self.assertRaisesRegex(common.RunError, r"steps \(x\) failed \(exit 2\)"):
            common.stage(["--tool", "nope", "--levels", "1"], log, "steps (x)", env={"WRK_HEADERS": "h"}, cores=[0])
        with open(log) as f:
            self.assertIn("unknown --tool 'nope'", f.read())
        self.assertEqual(dict(os.environ), before)  # the stage's environment is undone
        self.assertEqual(os.sched_getaffinity(0), affinity)

    def test_stage_bad_option_from_argparse(self):
        import os
        log = os.path.join(self.out(), "commands.log")
        with self.assertRaisesRegex(common.RunError, "exit 2"):
            common.stage(["--levels", "1"], log, "steps (y)")  # --tool is required
        with open(log) as f:
            self.assertIn("--tool", f.read())


class Console(unittest.TestCase):
    """tps-trend's console: in a thread, a writer drawn at its rate, then stopped whether a writer
    is open or not; with --pty (the case's terminal, sutlab_lab/ramps.Terminal), its screen and
    its counters."""

    def test_drains_at_its_rate_then_stops(self):
        import os
        import tempfile
        import threading
        import time
        from sutlab_lab.commands import console
        d = tempfile.mkdtemp(prefix="sutlab-console-")
        c = console.Fifo(os.path.join(d, "console"), "128k", os.path.join(d, "console.log"))
        t0 = time.monotonic()

        def write():
            with open(c.path, "wb") as f:
                f.write(b"x\n" * 196608)  # 384 KiB: beyond a pipe's buffer, so the writer waits on the rate
        w = threading.Thread(target=write)
        w.start()
        w.join(20)
        took = time.monotonic() - t0
        c.close()
        self.assertFalse(c.thread.is_alive())
        self.assertFalse(os.path.exists(c.path))
        self.assertGreater(took, 2.0)  # 320 KiB at 128 KiB/s at least (the last 64 KiB, a pipe's buffer, may wait)
        with open(os.path.join(d, "console.log")) as f:
            self.assertIn("console: 196608 lines, 393216 bytes", f.read())

    def test_close_with_no_writer(self):
        import os
        import tempfile
        from sutlab_lab.commands import console
        d = tempfile.mkdtemp(prefix="sutlab-console-")
        c = console.Fifo(os.path.join(d, "console"), "1m", os.path.join(d, "console.log"))
        c.close()
        self.assertFalse(c.thread.is_alive())

    def test_the_screen_wraps_scrolls_and_overwrites_as_a_terminal(self):
        from sutlab_lab.commands import console
        screen = console.Screen()
        screen.feed(b"hello\rHE\n" + b"x" * 170 + b"\n\xc3")  # an e-acute split across two reads
        screen.feed(b"\xa9\n")
        self.assertEqual(list(screen.rows)[-5:], ["HEllo", "x" * 80, "x" * 80, "x" * 10, "\u00e9"])
        screen.feed(b"row\n" * 30)
        self.assertEqual(list(screen.rows), ["row"] * console.ROWS)

    def test_a_writer_is_drawn_and_counted(self):
        import os
        import tempfile
        import time
        d = tempfile.mkdtemp(prefix="sutlab-console-")
        term = ramps.Terminal(d)
        try:
            t0 = time.time()
            with open(term.path, "wb") as f:  # as Locust's --print-responses writes: a flush a line
                for _ in range(2000):
                    f.write(b"200 " + b"e" * 995 + b"\n")
                    f.flush()
            for _ in range(50):
                with open(term.counters) as c:
                    last = c.read().splitlines()[-1].split(",")
                if last[2] == "2000":
                    break
                time.sleep(0.1)
            # the tty's line discipline turns each LF into CR LF, as under a terminal window
            self.assertEqual((int(last[1]), int(last[2])), (2000 * 1001, 2000))
            speed = term.speed((t0 - 2, time.time() + 1))
            self.assertGreater(speed["lines"], 0)
            self.assertAlmostEqual(speed["Bps"] / speed["lines"], 1001, delta=1)
        finally:
            term.close()
        self.assertFalse(os.path.lexists(term.path))  # the link goes with the console
        self.assertIsNotNone(term.proc.returncode)


class Checks(unittest.TestCase):
    def test_every_case_has_its_texts(self):
        for name, case in CASES.items():
            self.assertEqual(case.NAME, name)
            for text in (case.TITLE, case.WRITEUP, case.INVENTED):
                self.assertTrue(text.strip(), name)
        self.assertFalse(set(CASES) & set(PLANNED))

    def test_tps_trend(self):
        # the full set: tests/tools/test_case_tps_trend.py
        off = rows((1, 1500), (2, 3000), (100, 6500), mean_ms=0.6, cpu_web_pct=20.0, capacity_web=1.0, verdict="load")
        on = rows((1, 150), (2, 150), (100, 150), cpu_web_pct=3.0, capacity_web=1.0, verdict="load")
        # the ramps: the 600 s one printing off past 6000, the 100 s one printing on at 180
        curves = {("off", 600): {"peak": 6800.0}, ("on", 100): {"plateau": 180.0}}
        c = {x.what: x for x in tps_trend.checks(off, on, curves)}
        self.assertEqual(checks.verdict(c.values())[0], "reproduced", [(x.what, x.measured) for x in c.values()])
        self.assertEqual(c["printing off / on, TPS"].measured, "43.3x")
        self.assertTrue(c["printing on: top TPS"].ok)  # the console's speed is measured: counted
        # the server busy while printing, and another tier the limit: not reproduced
        on[2]["cpu_web_pct"] = 90.0
        on[2]["verdict"] = "web"
        bad = sorted(x.what for x in tps_trend.checks(off, on, curves) if x.ok is False)
        self.assertEqual(bad, ["printing on, 10-100 users: the tier that limits", "printing on: the server's CPU"])
        self.assertEqual(checks.verdict(tps_trend.checks(off, on, curves))[0], "not reproduced")

    def test_spray(self):
        # the full set: tests/tools/test_case_spray.py
        inline = {"level": 100.0, "success": 0.0, "mean_ms": 7000.0, "p50_ms": 4000.0, "p95_ms": 22000.0,
                  "errors": "refused:900 timeout:2100", "verdict": "none"}
        r = {(None, "inline"): inline, (None, "offload"): {"success": 1.0},
             (None, spray.POOL): {"success": 0.31, "mean_ms": 6800.0, "p50_ms": 2200.0,
                                  "errors": "refused:600 reset/EOF:400 timeout:1067"},
             ("nginx", "inline"): {"success": 0.0, "errors": "502:2728 timeout:257"}}
        self.assertEqual(checks.verdict(spray.checks(r))[0], "reproduced")
        r[("nginx", "inline")]["errors"] = "504:2728 timeout:257"  # a 5xx, not the write-up's 502
        r[(None, spray.POOL)]["success"] = 1.0                     # the pool as big as the rate needs
        self.assertEqual(sorted(x.what for x in spray.checks(r) if x.ok is False),
                         ["Future: success", "blocking behind nginx (the lab's proxy): 502 answers"])

    def test_ratio_cases(self):
        ok = keepalive.checks({"keep-alive": rows((16, 60000)), "close": rows((16, 16000))})
        self.assertTrue(ok[0].ok)
        self.assertFalse(keepalive.checks({"keep-alive": rows((16, 60000)), "close": rows((16, 59000))})[0].ok)


class LabFlags(unittest.TestCase):
    """A case's arms save their flags in the lab (infra/lab restart -- FLAGS); the user's come back
    when the case ends, or none when there were none."""

    def context(self, var):
        with unittest.mock.patch.dict(os.environ, {"SUTLAB_LAB_VAR": var}):
            return common.Context("x", os.path.join(var, "out"))

    def test_the_users_flags_come_back(self):
        with tempfile.TemporaryDirectory() as var:
            path = os.path.join(var, "sutlab.flags")
            with open(path, "w") as f:
                f.write("--workers\n1\n")
            ctx = self.context(var)
            with open(path, "w") as f:
                f.write("--app-cpu-us\n416\n")  # the case's last arm
            ctx.restore_lab_flags()
            with open(path) as f:
                self.assertEqual(f.read(), "--workers\n1\n")

    def test_none_saved_none_left(self):
        with tempfile.TemporaryDirectory() as var:
            ctx = self.context(var)
            with open(os.path.join(var, "sutlab.flags"), "w") as f:
                f.write("--redis-cache\n")
            ctx.restore_lab_flags()
            self.assertFalse(os.path.exists(os.path.join(var, "sutlab.flags")))


class Texts(unittest.TestCase):
    def test_each_case_reads_its_two_texts_from_its_md(self):
        for name, case in CASES.items():
            base = case.__name__.rpartition(".")[2]
            with open(os.path.join(os.path.dirname(case.__file__), base + ".md")) as f:
                md = f.read()
            self.assertTrue(case.WRITEUP and case.INVENTED, name)
            self.assertIn("## The write-up\n\n" + case.WRITEUP + "\n\n## Chosen here", md, name)
            self.assertTrue(md.endswith("\n" + case.INVENTED + "\n"), name)

    def test_a_heading_missing_or_repeated_is_an_error(self):
        good = "<!-- x -->\n\n## The write-up\n\nsaw\n\n## Chosen here, not published by the write-up\n\n- chose\n"
        self.assertEqual(texts.parse(good), {"writeup": "saw", "invented": "- chose"})
        for bad in (good.replace("## The write-up", "## The writeup"), good + "## The write-up\n",
                    good.split("## Chosen")[0]):
            with self.assertRaises(ValueError):
                texts.parse(bad)

    def test_no_case_module_is_over_100_lines(self):
        # a case is a declaration; its prose lives in its .md
        for name, case in CASES.items():
            with open(case.__file__) as f:
                self.assertLessEqual(len(f.read().splitlines()), 100, name)


class Cells(unittest.TestCase):
    def test_cells(self):
        r = {"level": 8.0, "rps": 1234.5, "p99_ms": 3.21, "busy_web": 0.456, "verdict": "web", "errors": "0"}
        self.assertEqual(common.cells("x", r, ("rps", "p99_ms", "busy_web", "verdict", "errors", "busy_db")),
                         ["x", "8", "1234", "3.2", "46", "web", "0", "n/a"])


if __name__ == "__main__":
    unittest.main()
