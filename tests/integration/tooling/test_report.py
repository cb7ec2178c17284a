#!/usr/bin/python3
"""report.html (loadscripts/sutlab_lab/htmlreport.py) of real runs of steps, spray, flip and bench,
and of a case page made of steps' run as its stage, opened in Debian's headless Chromium
(browser.py): it rendered (its tables in the DOM, every image with a size, a screenshot), its
console shows no error, and no request left the page; each page has its CPU per tier over time
(panels.py: cpu.png on the page, rendered, and cpu.csv beside it with the tiers sampled and every
run marked). The same checks fail on a page with a broken image, an external URL, or no CPU
panel."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import types
import unittest

import browser
from sutlab_testlib import Server, clean_env, free_port, source_root, sutlab_bin

LOADSCRIPTS = os.path.join(source_root(), "loadscripts")
ONE_PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                          "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d9e2a0"
                          "0000000049454e44ae426082")
NO_DB = ["--db-url", "postgresql://127.0.0.1:1/none"]


def run(argv, timeout=180):
    # bench finds the binary under test through SUTLAB_BIN (clean_env drops the other SUTLAB_
    # variables: sutlab would read them as flags); a CI clone has no build/sutlab of its own
    return subprocess.run(["/usr/bin/python3"] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=clean_env({"SUTLAB_BIN": sutlab_bin()}))


def png_size(data):
    """(width, height) from a PNG's IHDR."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    return struct.unpack(">II", data[16:24])


def check_cpu_panel(test, page, kind, images=1):
    """The page's CPU per tier over time: `images` cpu.png rendered with a size (the count the
    page's script keeps in data-cpu-images)."""
    test.assertEqual(page.data.get("cpuImages"), str(images), "%s: the CPU per tier over time panel" % kind)


def cpu_csv(out_dir):
    """cpu.csv beside a page: (header, rows as lists)."""
    with open(os.path.join(out_dir, "cpu.csv")) as f:
        lines = [ln.split(",") for ln in f.read().splitlines()]
    return ",".join(lines[0]), lines[1:]


class Pages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-report-")
        cls.pages = {}
        with Server(workers=1, extra_args=NO_DB) as srv:
            url = "http://127.0.0.1:%d" % srv.port
            steps = os.path.join(cls.tmp, "steps")
            p = run([os.path.join(LOADSCRIPTS, "steps"), "--url", url, "--web-pid", str(srv.proc.pid), "--out", steps,
                     "--tool", "ab", "--levels", "2,4", "--duration", "1", "--warmup", "0", "--fail-if", "p99<60s"])
            assert p.returncode == 0, p.stdout + p.stderr
            cls.pages["steps"] = os.path.join(steps, "report.html")
            spray = os.path.join(cls.tmp, "spray")
            p = run([os.path.join(LOADSCRIPTS, "spray"), "--url", url, "--path", "/health_check", "--rate", "20",
                     "--duration", "1", "--timeout", "2", "--out", spray, "--web-pid", str(srv.proc.pid)])
            assert p.returncode == 0, p.stdout + p.stderr
            cls.pages["spray"] = os.path.join(spray, "report.html")
        port = free_port()
        flip = os.path.join(cls.tmp, "flip")
        p = run([os.path.join(LOADSCRIPTS, "flip"), "--keepalive-timeout", "0", "--scenario", "health",
                 "--duration", "1", "--warmup", "0", "--connections", "4", "--url", "http://127.0.0.1:%d" % port,
                 "--spawn", "%s serve --listen 127.0.0.1:%d --workers 1 %s" % (sutlab_bin(), port, " ".join(NO_DB)),
                 "--out", flip, "--size", "900x700"])
        assert p.returncode == 0, p.stdout + p.stderr
        cls.pages["flip"] = os.path.join(flip, "report.html")
        bench = os.path.join(cls.tmp, "bench")
        p = run([os.path.join(LOADSCRIPTS, "bench"), "--suite", "static", "--duration", "1", "--rounds", "1",
                 "--warmup", "0", "--endpoints", "health_check", "--out", bench])
        assert p.returncode == 0, p.stdout + p.stderr
        cls.pages["bench"] = os.path.join(bench, "report.html")
        cls.pages["case"] = case_page(os.path.join(cls.tmp, "case"), {"stage-a": steps, "stage-b": steps})
        cls.browser = browser.Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_rendered(self, kind, images, tables=1, cpu=1):
        page = self.browser.open(self.pages[kind])
        check_cpu_panel(self, page, kind, cpu)
        self.assertEqual(page.errors, [], kind)
        self.assertEqual(page.requests, [], kind)
        self.assertEqual(page.data.get("report"), kind)
        self.assertGreaterEqual(page.tables, tables, kind)
        self.assertEqual(page.data.get("images"), str(images), kind)
        self.assertEqual(page.data.get("brokenImages"), "0", kind)
        width, height = png_size(page.screenshot)
        self.assertGreater(width, 1100)  # the window's 1,200 less a scroll bar
        self.assertGreater(height, 600)
        with open(os.path.join(self.tmp, kind + ".png"), "wb") as f:
            f.write(page.screenshot)
        with open(self.pages[kind]) as f:
            return f.read()

    def cpu_rows(self, kind, header):
        """cpu.csv beside the page: its header as expected, and some CPU on the first tier's
        column; {mark: rows} (a row per interval between two looks of the sampler, every 0.25 s
        when the machine lets it: a busy one gives fewer)."""
        head, rows = cpu_csv(os.path.dirname(self.pages[kind]))
        self.assertEqual(head, header, kind)
        self.assertTrue(any(r[2] and float(r[2]) > 0 for r in rows), rows)
        marks = {}
        for r in rows:
            marks.setdefault(r[1], []).append(r)
        return marks

    def test_steps(self):
        text = self.assert_rendered("steps", images=2)  # per level, and CPU per tier over time
        # the title names the request that ran and what a level counts (loads.Load.describe, LEVEL_UNITS)
        for what in ("steps: ab: GET /health_check; levels 2,4 concurrent clients",
                     "What ran", "flags in force", "--workers=1", "load average", "limiting tier by level",
                     "fail-if: all 1 threshold met", "cpu outside", "CPU per tier over time"):
            self.assertIn(what, text)
        marks = self.cpu_rows("steps", "t,level,cpu_web_pct,cpu_load_pct")
        self.assertEqual(sorted(marks), ["2", "4"])
        # sampled within the steps, not only at their ends
        self.assertGreater(sum(len(r) for r in marks.values()), 2, marks)
        self.assertRegex(text, r"<td>2</td>")

    def test_spray(self):
        text = self.assert_rendered("spray", images=1)  # CPU per tier over time
        self.assertIn("Success       [ratio]", text)
        self.assertIn("success 100.00% of 20 requests", text)
        # the server given by --web-pid, and httperf as the load tier
        self.assertEqual(list(self.cpu_rows("spray", "t,run,cpu_web_pct,cpu_load_pct")), ["spray"])

    def test_flip(self):
        text = self.assert_rendered("flip", images=2)  # flip.png, CPU per tier over time
        self.assertRegex(text, r"req/s on / off: [\d.]+x")
        self.assertIn("--keepalive-timeout=0", text)
        # both arms on one clock, each marked (the spawned server; no PostgreSQL to sample)
        self.assertEqual(list(self.cpu_rows("flip", "t,run,cpu_web_pct")), ["off r1", "on r1"])

    def test_bench(self):
        # bench's suites print text tables: they are on the page as printed
        text = self.assert_rendered("bench", images=1, tables=0)  # CPU per tier over time
        self.assertIn("suite static", text)
        self.assertIn("ratios sutlab/nginx", text)
        marks = self.cpu_rows("bench", "t,run,cpu_sutlab_pct,cpu_nginx_pct")
        self.assertEqual(sorted(marks), ["static health_check nginx r1", "static health_check sutlab r1"])
        # a tier is blank where it did not run, not drawn as zero
        self.assertTrue(all(r[3] == "" for r in marks["static health_check sutlab r1"]), marks)

    def test_case(self):
        # two stages (steps' run twice): each one's curves, CPU per tier over time among them
        text = self.assert_rendered("case", images=4, tables=0, cpu=2)
        for stage in ("stage-a", "stage-b"):
            self.assertIn("stage %s: CPU per tier over time (%s/cpu.csv)" % (stage, stage), text)


def case_page(out, stages):
    """A case's report.html (commands/case.py's write_page) over stages that are steps' outputs:
    {stage: steps' --out}."""
    from sutlab_lab import htmlreport  # loadscripts/ is on PYTHONPATH: tests/meson.build
    from sutlab_lab.commands import case
    os.makedirs(out)
    for stage, src in stages.items():
        shutil.copytree(src, os.path.join(out, stage))
    page = htmlreport.Report("case", "case x: its stages", argv=["loadscripts/case", "x"])
    case.write_page(page, types.SimpleNamespace(out=out, commands=["loadscripts/steps ..."]),
                    "# case x\n\nmeasured", "reproduced", "verdict: reproduced")
    return os.path.join(out, "report.html")


class TheCheckCanFail(unittest.TestCase):
    """Pages made wrong on purpose: the same checks see what is wrong."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-report-bad-")
        cls.browser = browser.Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def page(self, name, html):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(html)
        return self.browser.open(path)

    def report(self):
        from sutlab_lab import htmlreport  # loadscripts/ is on PYTHONPATH: tests/meson.build
        r = htmlreport.Report("steps", "a page")
        r.add_markdown("t", "| a | b |\n|---|---|\n| 1 | 2 |")
        png = os.path.join(self.tmp, "one.png")
        with open(png, "wb") as f:
            f.write(ONE_PIXEL)
        r.add_image("one pixel", png)
        out = os.path.join(self.tmp, "good")
        os.makedirs(out, exist_ok=True)
        with open(r.write(out)) as f:
            return f.read()

    def test_bench_gates_on_its_runs(self):
        out = os.path.join(self.tmp, "bench-gate")
        p = run([os.path.join(LOADSCRIPTS, "bench"), "--suite", "static", "--duration", "1", "--rounds", "1",
                 "--warmup", "0", "--endpoints", "health_check", "--out", out,
                 "--fail-if", "ratio>=0.01@static.health_check", "--fail-if", "errors<1%",
                 "--fail-if", "rps>=1000000000@static.health_check"])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"(?m)^fail-if rps>=1000000000@static.health_check violated at "
                                   r"static.health_check: rps is \d+$")
        self.assertNotIn("ratio>=0.01", p.stdout)
        self.assertNotIn("errors<1%", p.stdout)
        p = run([os.path.join(LOADSCRIPTS, "bench"), "--suite", "static", "--fail-if", "mean<2ms"])
        self.assertEqual(p.returncode, 2, p.stderr)  # bench measures no mean: refused before any run
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_a_good_page_passes(self):
        p = self.page("good.html", self.report())
        self.assertEqual((p.errors, p.requests, p.data.get("brokenImages")), ([], [], "0"))

    def test_a_broken_image_is_seen(self):
        html = re.sub(r"base64,[^\"]+", "base64,AAAAnotapng", self.report())
        p = self.page("broken.html", html)
        self.assertEqual(p.data.get("brokenImages"), "1")
        self.assertTrue(any("image did not render" in e for e in p.errors), p.errors)

    def test_a_page_without_its_cpu_panel_is_seen(self):
        p = self.page("no-cpu.html", self.report())  # renders well, but has no CPU per tier over time
        self.assertEqual((p.errors, p.data.get("brokenImages")), ([], "0"))
        with self.assertRaises(AssertionError):
            check_cpu_panel(self, p, "steps")

    def test_a_case_whose_stage_has_no_cpu_curve_is_seen(self):
        stage = os.path.join(self.tmp, "stage")
        os.makedirs(stage)
        with open(os.path.join(stage, "steps.png"), "wb") as f:
            f.write(ONE_PIXEL)  # steps.png only: a stage run without its CPU curve
        path = case_page(os.path.join(self.tmp, "case-no-cpu"), {"a": stage})
        with open(path) as f:
            self.assertIn("no cpu.png in", f.read())  # said on the page
        p = self.browser.open(path)
        self.assertEqual(p.data.get("images"), "1")
        with self.assertRaises(AssertionError):
            check_cpu_panel(self, p, "case")

    def test_an_external_url_is_seen(self):
        # in the report: its policy refuses the request, and says so in the console
        html = self.report().replace("</body>", '<img alt="ext" src="https://example.invalid/x.png"></body>')
        p = self.page("external.html", html)
        self.assertTrue(any("example.invalid" in e for e in p.errors), p.errors)
        # a page without that policy: the request is seen (and goes nowhere: the proxy answers nothing)
        p = self.page("external-nocsp.html", '<html><body><img src="http://example.invalid/y.png"></body></html>')
        self.assertEqual(p.requests, ["http://example.invalid/y.png"])


if __name__ == "__main__":
    unittest.main()
