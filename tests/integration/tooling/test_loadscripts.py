#!/usr/bin/python3
"""Integration tests: loadscripts/ (Locust step run, plot, flip, wrk scripts) against a private sutlab.

Run under loadscripts/sutlab_lab/services/with-services (SUTLAB_TEST_DB_URL, SUTLAB_TEST_REDIS_URL). The class
works in a database of its own (migrated, seeded with --size tiny) and starts its own sutlab on
a free port; flip starts (and stops) its servers itself with --spawn, on other free ports. Every
load is bounded (seconds) and goes to 127.0.0.1 only. Assertions are on the tools' outputs: the
CSV rows, the PNG headers, the flip table.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import psutil

from pgtest import FreshDatabase, server_url
from sutlab_testlib import (SANITIZER_MARKERS, Server, clean_env, free_port, migrate_and_seed,
                            source_root, stop_class_server, sutlab_bin)

PYTHON = "/usr/bin/python3"
LOCUST = "/usr/bin/locust"
ROOT = source_root()
LOADSCRIPTS = os.path.join(ROOT, "loadscripts")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def ensure_locust():
    """python3-locust is in infra/lab's TEST_PKGS; install it here only if it is missing and we
    can (root, apt-get), else skip with the reason."""
    if os.access(LOCUST, os.X_OK):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "python3-locust"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if not os.access(LOCUST, os.X_OK):
        raise unittest.SkipTest("python3-locust is not installed and could not be installed "
                                "(apt-get install python3-locust; infra/lab test does it)")


def redis_url():
    url = os.environ.get("SUTLAB_TEST_REDIS_URL")
    if not url:
        raise unittest.SkipTest("SUTLAB_TEST_REDIS_URL is not set "
                                "(run under loadscripts/sutlab_lab/services/with-services)")
    return url + "/9"


def tool_env(extra=None):
    env = clean_env(extra)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(33)
    assert head[:8] == PNG_SIGNATURE, "%s: not a PNG signature: %r" % (path, head[:8])
    assert head[12:16] == b"IHDR", "%s: first chunk is %r, not IHDR" % (path, head[12:16])
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def run(argv, timeout, env=None, cwd=None):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=env or tool_env(), cwd=cwd or ROOT, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


def worker_ports(argv):
    """The master ports a process's command line names (a Locust worker's --master-port N)."""
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--master-port"]


class LoadScriptsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        server_url()
        cls.redis = redis_url()
        for tool in ("wrk", "hey"):
            if not shutil.which(tool):
                raise unittest.SkipTest("%s is not installed (apt-get install %s)" % (tool, tool))
        ensure_locust()
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-loadscripts-")
        cls.db = FreshDatabase(prefix="sutlab_ls")
        cls.db_url = cls.db.create()
        cls.srv = None
        try:
            migrate_and_seed(cls.db_url, timeout=120)
            cls.srv = Server(extra_args=["--db-url", cls.db_url, "--redis-url", cls.redis], workers=1)
            cls.srv.start()
            cls.url = "http://127.0.0.1:%d" % cls.srv.port
            # One 5-second Locust step run, shared by the tests below: 1 user, then 2 (2.5 s each).
            cls.prefix = os.path.join(cls.tmp, "step")
            cls.locust_argv = [
                LOCUST, "-f", "%s,%s" % (os.path.join(LOADSCRIPTS, "locust", "locustfile.py"),
                                         os.path.join(LOADSCRIPTS, "locust", "stepload.py")),
                "--headless", "--host", cls.url, "--tags", "health_check", "show_articles",
                "--step-size", "1", "--step-hold", "2.5", "--steps", "2", "--step-settle", "1",
                "--think-time", "0.002", "--csv", cls.prefix, "--only-summary"]
            cls.locust_rc, cls.locust_out, cls.locust_err = run(cls.locust_argv, timeout=60)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp, cls.db)

    def locust_ok(self):
        self.assertEqual(self.locust_rc, 0, "locust exited %s\nstdout: %s\nstderr: %s"
                         % (self.locust_rc, self.locust_out[-2000:], self.locust_err[-3000:]))

    # -- soak

    def test_soak_samples_the_server_under_both_scenarios(self):
        out = os.path.join(self.tmp, "soak")
        rc, stdout, stderr = run([PYTHON, os.path.join(LOADSCRIPTS, "soak"), "--url", self.url, "--pid",
                                  str(self.srv.proc.pid), "--duration", "8s", "--users", "4", "--spawn-rate", "4",
                                  "--interval", "2", "--out", out], timeout=120, env=tool_env({}))
        self.assertEqual(rc, 0, "soak exited %s\n%s\n%s" % (rc, stdout[-2000:], stderr[-2000:]))
        with open(os.path.join(out, "samples.csv"), newline="") as f:
            samples = list(csv.DictReader(f))
        self.assertGreaterEqual(len(samples), 2, samples)
        self.assertTrue(all(int(r["rss_kb"]) > 1000 and int(r["fds"]) > 0 for r in samples), samples)
        with open(os.path.join(out, "locust_stats.csv"), newline="") as f:
            names = {r["Name"]: r for r in csv.DictReader(f)}
        self.assertGreater(int(names["Aggregated"]["Request Count"]), 0)
        # both locustfiles ran: the blog scenario's article index and the stores' listing
        self.assertTrue(any("articles" in n for n in names) and any("stores" in n for n in names), list(names))
        self.assertIn("failures 0", stdout)

    # -- Locust

    def test_locust_step_run_has_per_second_history(self):
        self.locust_ok()
        with open(self.prefix + "_stats_history.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["Name"] == "Aggregated"]
        self.assertGreaterEqual(len(rows), 3, "fewer than 3 history rows: %r" % rows)
        stamps = [int(r["Timestamp"]) for r in rows]
        gaps = [b - a for a, b in zip(stamps, stamps[1:])]
        self.assertTrue(all(g >= 1 for g in gaps), "timestamps not increasing: %r" % stamps)
        self.assertTrue(all(g <= 2 for g in gaps), "rows further apart than 2 s: %r" % stamps)
        self.assertGreaterEqual(gaps.count(1), len(gaps) - 1, "not one row per second: %r" % stamps)
        counts = [int(r["Total Request Count"]) for r in rows]
        self.assertEqual(counts, sorted(counts), "request counts decrease: %r" % counts)
        self.assertTrue(all(c > 0 for c in counts[1:]), "rows with no requests: %r" % counts)
        self.assertEqual([int(r["Total Failure Count"]) for r in rows][-1], 0, "failures in the run")
        users = {int(r["User Count"]) for r in rows}
        self.assertTrue({1, 2} <= users, "the step shape did not run 1 then 2 users: %r" % users)

    def test_locust_writes_seconds_steps_and_flags(self):
        self.locust_ok()
        with open(self.prefix + "_seconds.csv", newline="") as f:
            secs = list(csv.DictReader(f))
        self.assertGreaterEqual(len(secs), 3)
        stamps = [int(r["timestamp"]) for r in secs]
        self.assertEqual(stamps, list(range(stamps[0], stamps[0] + len(stamps))), "not one row per second")
        self.assertTrue(all(int(r["requests"]) > 0 for r in secs), secs)
        for r in secs:
            p50, p95, p99 = float(r["p50_ms"]), float(r["p95_ms"]), float(r["p99_ms"])
            self.assertTrue(0 < p50 <= p95 <= p99, r)
            # the second's histogram: as many responses as the row counts, its p99 a bucket of it
            # (or the exact maximum, which caps a rounded bucket)
            hist = {float(k): int(n) for k, n in (pair.split(":") for pair in r["histogram"].split())}
            self.assertEqual(sum(hist.values()), int(r["requests"]), r)
            self.assertTrue(p99 in hist or p99 == float(r["max_ms"]), r)
        with open(self.prefix + "_steps.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertTrue(all(None not in r for r in rows), "a row wider than the header: %r" % rows)
        steps = {int(r["users"]): r for r in rows}
        self.assertIn(1, steps)
        self.assertGreater(float(steps[1]["rps"]), 0)
        with open(self.prefix + "_flags.txt") as f:
            flags = f.read()
        self.assertIn("--workers=1", flags)
        self.assertIn("--gzip=off", flags)
        # both tagged endpoints ran, nothing else
        with open(self.prefix + "_stats.csv", newline="") as f:
            names = {r["Name"] for r in csv.DictReader(f)} - {"Aggregated"}
        self.assertEqual(names, {"/health_check", "/api/articles/:slug"})

    # -- plot

    def test_plot_locust_pngs_have_the_size_asked_for(self):
        self.locust_ok()
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "plot"), self.prefix + "_stats_history.csv",
                            "--size", "640x480", "-o", os.path.join(self.tmp, "p1")], timeout=60)
        self.assertEqual(rc, 0, err)
        written = out.split()
        self.assertIn(os.path.join(self.tmp, "p1_time.png"), written)
        self.assertIn(os.path.join(self.tmp, "p1_users.png"), written)
        for path in written:
            self.assertEqual(png_size(path), (640, 480), path)
            self.assertGreater(os.path.getsize(path), 5000, "%s is suspiciously small" % path)

    def test_plot_flags_from_url_and_hey_csv(self):
        hey_csv = os.path.join(self.tmp, "hey.csv")
        with open(hey_csv, "w") as f:
            proc = subprocess.run(["hey", "-z", "2s", "-c", "4", "-o", "csv", self.url + "/health_check"],
                                  stdout=f, stderr=subprocess.PIPE, timeout=30)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "plot"), hey_csv, "--url", self.url,
                            "--size", "800x600"], timeout=60)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out.split(), [os.path.join(self.tmp, "hey_time.png")])
        self.assertEqual(png_size(out.split()[0]), (800, 600))

    def test_plot_rejects_what_it_cannot_read(self):
        junk = os.path.join(self.tmp, "junk.txt")
        with open(junk, "w") as f:
            f.write("not a load test output\n")
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "plot"), junk], timeout=30)
        self.assertEqual(rc, 1)
        self.assertIn("junk.txt", err)
        rc, _, err = run([PYTHON, os.path.join(LOADSCRIPTS, "plot"), self.prefix + "_stats_history.csv",
                          "--size", "12x5"], timeout=30)
        self.assertEqual(rc, 2, err)

    # -- wrk scripts

    def test_wrk_scripts_print_their_summary(self):
        token = run([PYTHON, os.path.join(LOADSCRIPTS, "wrk", "login"), self.url, "2"], timeout=30)
        self.assertEqual(token[0], 0, token[2])
        self.assertRegex(token[1].strip(), r"^[0-9a-f]{64}$")
        cases = [("article_by_slug.lua", self.url, []), ("store_by_id.lua", self.url, []),
                 ("stores_by_category.lua", self.url, []), ("articles_index.lua", self.url, ["20", "2"]),
                 ("auth_post.lua", self.url, ["favorite"])]
        for script, url, sargs in cases:
            argv = ["wrk", "-t1", "-c2", "-d1s", "-s", os.path.join(LOADSCRIPTS, "wrk", script), url]
            if sargs:
                argv += ["--"] + sargs
            rc, out, err = run(argv, timeout=30, env=tool_env({"TOKEN": token[1].strip()}))
            self.assertEqual(rc, 0, "%s: %s %s" % (script, out, err))
            m = re.search(r"^SUTLAB_WRK (\{.*\})$", out, re.M)
            self.assertIsNotNone(m, "%s printed no summary: %s" % (script, out))
            d = json.loads(m.group(1))
            self.assertGreater(d["requests"], 0, script)
            self.assertEqual(sum(d["errors"].values()), 0, "%s: errors %r\n%s" % (script, d["errors"], out))
            self.assertLessEqual(d["latency_ms"]["p50"], d["latency_ms"]["p99"])

    # -- flip

    def flip(self, flag_args, out_dir, extra=(), relative=False):
        """relative: flip runs in the binary's directory and names it ./sutlab (the server itself
        runs in out_dir, so flip must resolve the path from where it was started)."""
        port = free_port()
        binary = os.path.join(".", os.path.basename(sutlab_bin())) if relative else sutlab_bin()
        spawn = "%s serve --listen 127.0.0.1:%d --workers 1 --db-url %s --redis-url %s" % (
            binary, port, self.db_url, self.redis)
        argv = [PYTHON, os.path.join(LOADSCRIPTS, "flip")] + flag_args + [
            "--duration", "2", "--warmup", "0", "--connections", "8", "--spawn", spawn,
            "--url", "http://127.0.0.1:%d" % port, "--out", out_dir, "--size", "900x700"] + list(extra)
        rc, out, err = run(argv, timeout=90, env=tool_env({"SUTLAB_BIN": sutlab_bin()}),
                           cwd=os.path.dirname(sutlab_bin()) if relative else None)
        # its own process, looked for by its command line: a bare port check failed once when
        # another test's server took the freed port straight away
        left = [q.pid for q in psutil.process_iter(["cmdline"])
                if "--listen" in (q.info["cmdline"] or ()) and "127.0.0.1:%d" % port in q.info["cmdline"]]
        self.assertEqual(left, [], "flip left its server running on port %d" % port)
        for name in os.listdir(out_dir):
            if name.startswith("server-"):
                with open(os.path.join(out_dir, name), errors="replace") as f:
                    log = f.read()
                for marker in SANITIZER_MARKERS:
                    self.assertNotIn(marker, log, "%s: %s" % (name, log[-4000:]))
        return rc, out, err

    def table_rows(self, out):
        rows = {}
        for line in out.splitlines():
            parts = line.split()
            if parts and not line[0].isspace() and parts[0] in ("off", "on", "on/off") and len(parts) >= 6:
                self.assertNotIn(parts[0], rows, "two %s rows:\n%s" % (parts[0], out))
                rows[parts[0]] = line
        return rows

    def test_flip_keepalive_prints_both_rows_and_a_png(self):
        out_dir = os.path.join(self.tmp, "flip-ka")
        rc, out, err = self.flip(["--keepalive-timeout", "0"], out_dir,
                                 ["--fail-if", "ratio>=0.01", "--fail-if", "errors<1%", "--fail-if", "p99<60s@on"])
        self.assertEqual(rc, 0, "flip failed:\n%s\n%s" % (out, err[-3000:]))
        self.assertIn("fail-if: all 3 thresholds met", out)
        self.assertRegex(out, r"(?m)^run\s+change\s+req/s\s+p50 ms\s+p95 ms\s+p99 ms\s+errors")
        rows = self.table_rows(out)
        self.assertEqual(set(rows), {"off", "on", "on/off"}, out)
        self.assertIn("--keepalive-timeout 10", rows["off"])
        self.assertIn("--keepalive-timeout 0", rows["on"])
        for label in ("off", "on"):
            m = re.match(r"^\S+\s+--keepalive-timeout \d+\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)",
                         rows[label])
            self.assertIsNotNone(m, rows[label])
            rps, p50, p95, p99, errors = int(m.group(1)), float(m.group(2)), float(m.group(3)), \
                float(m.group(4)), int(m.group(5))
            self.assertGreater(rps, 0)
            self.assertEqual(errors, 0, rows[label])
            self.assertTrue(0 < p50 <= p95 <= p99, rows[label])
        # the flags each run reported in sutlab_build_info
        self.assertRegex(out, r"(?m)^  off: .*--keepalive-timeout=10\b")
        self.assertRegex(out, r"(?m)^  on:  .*--keepalive-timeout=0\b")
        self.assertEqual(png_size(os.path.join(out_dir, "flip.png")), (900, 700))
        with open(os.path.join(out_dir, "table.txt")) as f:
            self.assertIn(rows["on"], f.read())

    def test_flip_with_distributed_locust(self):
        """--load-workers 2: Locust as a master and two workers, on a CPU budget; both arms measured,
        no worker left behind."""
        out_dir = os.path.join(self.tmp, "flip-workers")
        rc, out, err = self.flip(["--keepalive-timeout", "0"], out_dir,
                                 ["--no-png", "--tool", "locust", "--scenario", "health", "--load-workers", "2",
                                  "--load-cpus", "0-%d" % (min(2, os.cpu_count()) - 1)])
        self.assertEqual(rc, 0, "flip failed:\n%s\n%s" % (out, err[-3000:]))
        rows = self.table_rows(out)
        for label in ("off", "on"):
            self.assertGreater(int(rows[label].split()[3]), 0, rows[label])  # run change change req/s
        with open(os.path.join(out_dir, "run1-on.log")) as f:
            log = f.read()
        self.assertIn("--expect-workers 2", log)
        self.assertEqual(log.count("--worker --master-host 127.0.0.1"), 2, log[:2000])
        self.assertIn("2 workers connected", log)
        # this flip's workers, by the master ports its runs used (another run's Locust may share the machine)
        ports = set()
        for name in os.listdir(out_dir):
            if name.endswith(".log"):
                with open(os.path.join(out_dir, name)) as f:
                    ports.update(re.findall(r"--master-port (\d+)", f.read()))
        self.assertGreaterEqual(len(ports), 2, "no master port in the runs' logs")  # off and on at least
        workers = [p.pid for p in psutil.process_iter(["cmdline"])
                   if set(worker_ports(p.info["cmdline"] or ())) & ports]
        self.assertEqual(workers, [], "Locust workers left running")

    def test_flip_gzip_cuts_the_bytes(self):
        out_dir = os.path.join(self.tmp, "flip-gzip")
        # a gate it cannot meet: the run and its table as always, then exit 1 with the line
        rc, out, err = self.flip(["--gzip"], out_dir, ["--no-png", "--fail-if", "ratio>=1000"], relative=True)
        self.assertEqual(rc, 1, "flip failed:\n%s\n%s" % (out, err[-3000:]))
        self.assertRegex(out, r"(?m)^fail-if ratio>=1000 violated: ratio is [\d.]+$")
        rows = self.table_rows(out)
        self.assertIn("--no-gzip", rows["off"])
        self.assertIn("--gzip", rows["on"])
        self.assertIn("stores-gzip", out)
        kb = {}
        for label in ("off", "on"):
            cols = rows[label].split()
            kb[label] = float(cols[7])  # run change req/s p50 p95 p99 errors KB/resp
        self.assertLess(kb["on"], kb["off"] * 0.6, "gzip did not shrink the listing: %r" % kb)
        self.assertFalse(os.path.exists(os.path.join(out_dir, "flip.png")))

    def flip_redis_cache(self, name, extra):
        """(flip --redis-cache's on/off req/s ratio, its stdout), over 4 s with 1 s of warm-up."""
        out_dir = os.path.join(self.tmp, name)
        rc, out, err = self.flip(["--redis-cache"], out_dir, ["--duration", "4", "--warmup", "1"] + extra)
        self.assertEqual(rc, 0, "flip %s failed:\n%s\n%s" % (name, out, err[-3000:]))
        return float(re.search(r"x([\d.]+)", self.table_rows(out)["on/off"]).group(1)), out

    def test_flip_live_redis_cache_is_one_curve_with_a_step(self):
        """--live: one load, the flag changed at the half through the admin listener: one curve
        (live.csv) with rows on both sides of the change, and each half's flags as the server
        itself reported them during that half. What the cache gains is measured, not asserted:
        on this listing it is 1.3-2x, inside the shared machine's noise (0.85x-0.96x seen in CI),
        so the ratios of a restart flip and the live one are printed for a reader to compare."""
        ratios = {}
        ratios["restart"], _ = self.flip_redis_cache("flip-live-restart", [])
        out_dir = os.path.join(self.tmp, "flip-live-live")
        ratios["live"], out = self.flip_redis_cache(os.path.basename(out_dir), ["--live"])
        self.assertIn("the flag changed through the admin listener", out)
        # sutlab_build_info read in each half: the change reached the server, at the half
        self.assertRegex(out, r"(?m)^  off: .*--redis-cache=off\b")
        self.assertRegex(out, r"(?m)^  on:  .*--redis-cache=on\b")
        with open(os.path.join(out_dir, "live.csv"), newline="") as f:
            curve = list(csv.DictReader(f))
        before = [r for r in curve if r["after"] == "0" and float(r["t"]) > 0.5]
        after = [r for r in curve if r["after"] == "1"]
        self.assertTrue(len(before) >= 4 and len(after) >= 4, curve)
        # one load throughout: answering on both sides and across the change, with no stop at it (the
        # first scrapes may come before the load tool's first request on a busy machine)
        self.assertTrue(any(float(r["rps"]) > 0 for r in before), curve)
        self.assertTrue(all(float(r["rps"]) > 0 for r in before[-2:] + after), curve)
        self.assertEqual(png_size(os.path.join(out_dir, "flip.png")), (900, 700))
        sys.stderr.write("  req/s on/off: restart flip x%.2f, live flip x%.2f\n" % (ratios["restart"], ratios["live"]))

    def test_flip_cache_local_caches_in_redis_in_both_runs(self):
        # --cache-local needs --redis-cache: flip adds it to both runs, so only the copy differs
        out_dir = os.path.join(self.tmp, "flip-cache-local")
        rc, out, err = self.flip(["--cache-local"], out_dir, ["--no-png"])
        self.assertEqual(rc, 0, "flip failed:\n%s\n%s" % (out, err[-3000:]))
        rows = self.table_rows(out)
        self.assertIn("--no-cache-local", rows["off"])
        self.assertIn("--cache-local", rows["on"])
        self.assertIn("stores", out)
        self.assertRegex(out, r"(?m)^  off: .*--redis-cache=on\b.*--cache-local=off\b")
        self.assertRegex(out, r"(?m)^  on:  .*--redis-cache=on\b.*--cache-local=on\b")
        for label in ("off", "on"):
            self.assertEqual(int(rows[label].split()[6]), 0, rows[label])  # errors

    def test_flip_usage_errors(self):
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "flip")], timeout=30)
        self.assertEqual(rc, 2)
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "flip"), "--gzip", "--spawn", "x"], timeout=30)
        self.assertEqual(rc, 2)
        self.assertIn("--url", err)
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "flip"), "--gzip", "--tool", "spray", "--load-workers", "2"],
                           timeout=30)
        self.assertEqual(rc, 2)
        self.assertIn("--load-workers", err)
        rc, out, err = run([PYTHON, os.path.join(LOADSCRIPTS, "flip"), "--gzip", "--fail-if", "ratio>>1"], timeout=30)
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("--fail-if", err)
        out_dir = os.path.join(self.tmp, "flip-bad")
        rc, out, err = self.flip(["--no-such-flag"], out_dir)
        self.assertEqual(rc, 1)
        self.assertIn("--no-such-flag", err)


if __name__ == "__main__":
    unittest.main()
