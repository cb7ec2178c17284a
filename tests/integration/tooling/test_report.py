#!/usr/bin/python3
"""report.html (loadscripts/sutlab_lab/htmlreport.py) of real runs of steps, spray and flip, opened in
Debian's headless Chromium (browser.py): it rendered (its tables in the DOM, every image with a
size, a screenshot), its console shows no error, and no request left the page. The same check
fails on a page with a broken image or an external URL."""

import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

import browser
from sutlab_testlib import Server, clean_env, free_port, source_root, sutlab_bin

LOADSCRIPTS = os.path.join(source_root(), "loadscripts")
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
                     "--duration", "1", "--timeout", "2", "--out", spray])
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
        cls.browser = browser.Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def assert_rendered(self, kind, images, tables=1):
        page = self.browser.open(self.pages[kind])
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

    def test_steps(self):
        text = self.assert_rendered("steps", images=2)  # per level, and CPU per tier over time
        for what in ("What ran", "flags in force", "--workers=1", "load average", "limiting tier by level",
                     "fail-if: all 1 threshold met", "cpu outside", "CPU per tier over time"):
            self.assertIn(what, text)
        with open(os.path.join(os.path.dirname(self.pages["steps"]), "cpu.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "t,level,cpu_web_pct,cpu_load_pct")
        self.assertGreater(len(lines), 3, lines)  # sampled within the steps, not only at their ends
        self.assertTrue(any(float(ln.split(",")[2]) > 0 for ln in lines[1:]), lines)
        self.assertRegex(text, r"<td>2</td>")

    def test_spray(self):
        text = self.assert_rendered("spray", images=0)
        self.assertIn("Success       [ratio]", text)
        self.assertIn("success 100.00% of 20 requests", text)

    def test_flip(self):
        text = self.assert_rendered("flip", images=1)
        self.assertRegex(text, r"req/s on / off: [\d.]+x")
        self.assertIn("--keepalive-timeout=0", text)


    def test_bench(self):
        # bench's suites print text tables: they are on the page as printed
        text = self.assert_rendered("bench", images=0, tables=0)
        self.assertIn("suite static", text)
        self.assertIn("ratios sutlab/nginx", text)


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
            f.write(bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                                  "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d9e2a0"
                                  "0000000049454e44ae426082"))
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
