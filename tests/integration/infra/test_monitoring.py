#!/usr/bin/python3
"""Integration tests: the lab's monitoring, `infra/lab up --monitoring` (infra/lib/monitoring.sh).

- The plain lab: Prometheus and Debian's node, PostgreSQL and Redis exporters come up on the lab's
  own ports, every target is up (Prometheus's /api/v1/targets), `status` shows each target's health,
  the exporters see the lab's PostgreSQL and Redis (pg_up, redis_up), the recording rules are loaded;
  a `loadscripts/steps` run with wrk gives a req/s that sum(rate(http_requests_total)) over the
  measured step matches within 10 %; steps' and then flip's report.html (flip restarts the same
  lab for its off and on runs) carry the run's Prometheus series, found by themselves.
- The scaled lab (`--instances 2 --lb haproxy`): both sutlab instances and HAProxy's own exporter
  (PROMEX) are scraped and up, and HAProxy's series name the two servers.
- The netns lab (`--netns --instances 2 --lb haproxy`, root): Prometheus here, the PostgreSQL and
  Redis exporters in the db namespace, HAProxy's in the web one, every target reached through
  nsrelay and up under its namespace's address; requests from the client namespace counted on both
  instances.
- `down`: no Prometheus, exporter or relay process is left, their ports are free, the TSDB stays in
  var/monitoring/data (and the netns lab's namespaces are gone).
- The container lab's monitoring (`--containers --monitoring`) is tested with the container lab, in
  test_containers.py (one stack for all its tests).

Run under loadscripts/sutlab_lab/services/with-services (SUTLAB_TEST_DB_URL / SUTLAB_TEST_REDIS_URL), with prometheus,
the three exporters, haproxy, wrk and curl installed (infra/lab test installs them). Each lab runs
from its own state directory and ports.
"""

import csv
import json
import os
import random
import shutil
import subprocess
import tempfile
import signal
import time
import unittest
import uuid
import urllib.parse
import urllib.request

import psutil

from pgtest import fresh_database
from sutlab_testlib import pid_alive, port_is_free, sutlab_bin, source_root

ROOT = source_root()
LAB = os.path.join(ROOT, "infra", "lab")
STEPS = os.path.join(ROOT, "loadscripts", "steps")
FLIP = os.path.join(ROOT, "loadscripts", "flip")
PROGS = ("prometheus", "node-exporter", "postgres-exporter", "redis-exporter")
PG_BIN = "/usr/lib/postgresql/15/bin"
TOOLS = ("prometheus", "promtool", "prometheus-node-exporter", "prometheus-postgres-exporter",
         "prometheus-redis-exporter", "haproxy", "wrk", "curl")


def lab_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
    env["SUTLAB_LAB_BIN"] = sutlab_bin()
    env.update({k: str(v) for k, v in extra.items()})
    return env


def lab(env, *args, timeout=180, check=True):
    proc = subprocess.run(["bash", LAB] + list(args), env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError("infra/lab %s exited %d:\n%s" % (" ".join(args), proc.returncode, proc.stdout[-4000:]))
    return proc


def free_run(n):
    """A base port with base..base+n-1 all free (below the ephemeral range: see test_infra)."""
    rnd = random.Random()
    for _ in range(500):
        base = rnd.randrange(20000, 32000 - n)
        if all(port_is_free(base + i) for i in range(n)):
            return base
    raise AssertionError("no %d free ports in a row" % n)


def cmdline(pid):
    try:
        return " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return ""


class Monitoring(unittest.TestCase):

    def setUp(self):
        missing = [t for t in TOOLS if not shutil.which(t)]
        if missing:
            self.fail("missing tools: %s (infra/lab test installs them)" % ", ".join(missing))
        db = fresh_database(self)
        base = free_run(10)   # front, two backends, Prometheus, its four exporters, the netns lab's two relays
        self.front, self.backends, self.prom = base, [base + 1, base + 2], base + 3
        # PostgreSQL of the netns lab runs from here as the postgres user: a path it can traverse
        self.var = tempfile.mkdtemp(prefix="sutlab-monitoring-", dir="/tmp")
        os.chmod(self.var, 0o755)
        self.env = lab_env(SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_PORT=self.front,
                           SUTLAB_LAB_BACKEND_PORT=self.backends[0], SUTLAB_LAB_PROM_PORT=self.prom,
                           SUTLAB_LAB_DB_URL=db,
                           SUTLAB_LAB_REDIS_URL=os.environ.get("SUTLAB_TEST_REDIS_URL", "redis://127.0.0.1:1"))

        def cleanup():
            lab(self.env, "down", check=False, timeout=90)
            shutil.rmtree(self.var, ignore_errors=True)
        self.addCleanup(cleanup)

    # ---- Prometheus's HTTP API ----

    def api(self, path, **params):
        url = "http://127.0.0.1:%d/api/v1/%s?%s" % (self.prom, path, urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=5) as resp:
            doc = json.load(resp)
        self.assertEqual(doc["status"], "success", doc)
        return doc["data"]

    def query(self, expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = "%.3f" % at
        return self.api("query", **params)["result"]

    def scalar(self, expr, at=None):
        result = self.query(expr, at)
        self.assertEqual(len(result), 1, "%s: %s" % (expr, result))
        return float(result[0]["value"][1])

    def targets(self):
        return [(t["labels"]["job"], t["labels"]["instance"], t["health"])
                for t in self.api("targets", state="active")["activeTargets"]]

    def wait_all_up(self, jobs, seconds=20):
        deadline = time.monotonic() + seconds
        while True:
            got = self.targets()
            if got and {j for j, _, _ in got} == set(jobs) and all(h == "up" for _, _, h in got):
                return got
            self.assertLess(time.monotonic(), deadline, "targets not all up: %s" % got)
            time.sleep(0.5)

    def monitoring_pids(self, progs=PROGS):
        pids = {}
        for prog in progs:
            with open(os.path.join(self.var, "monitoring", prog + ".pid")) as f:
                pids[prog] = int(f.read().split()[0])
        return pids

    def check_down(self, pids):
        for prog, pid in pids.items():
            self.assertTrue(pid_alive(pid), "%s (pid %d) is not running before down" % (prog, pid))
        out = lab(self.env, "down").stdout
        self.assertIn("stopping prometheus", out)
        self.assertIn("lab stopped", out)
        for prog, pid in pids.items():
            self.assertFalse(pid_alive(pid), "%s (pid %d) still runs after down" % (prog, pid))
        # nothing else with our state directory in its argv (e.g. a Prometheus started twice)
        left = [(p, cmdline(p)) for p in psutil.pids()]
        left = [(p, c) for p, c in left if os.path.join(self.var, "monitoring") in c and pid_alive(p)]
        self.assertEqual(left, [])
        for port in range(self.prom, self.prom + 7):   # with the netns lab's two relays
            self.assertTrue(port_is_free(port), "port %d still open after down" % port)
        data = os.path.join(self.var, "monitoring", "data")
        self.assertTrue(os.path.isdir(os.path.join(data, "wal")), os.listdir(data))
        self.assertRegex(lab(self.env, "status").stdout, r"monitoring +stopped +\(Prometheus data kept in %s\)" % data)

    # ---- tests ----

    def test_plain_lab_rate_matches_steps(self):
        out = lab(self.env, "up", "--monitoring", "--", "--workers", "1").stdout
        self.assertIn("Prometheus: http://127.0.0.1:%d" % self.prom, out)
        got = self.wait_all_up({"sutlab", "node", "postgres", "redis", "prometheus"})
        self.assertIn(("sutlab", "127.0.0.1:%d" % self.front, "up"), got)
        status = lab(self.env, "status").stdout
        self.assertRegex(status, r"target sutlab +127\.0\.0\.1:%d +up" % self.front)
        self.assertRegex(status, r"prometheus +running +pid \d+ +http://127\.0\.0\.1:%d" % self.prom)
        self.assertEqual(self.scalar("pg_up"), 1.0)
        self.assertEqual(self.scalar("redis_up"), 1.0)
        # the recording rules are loaded and evaluated
        groups = self.api("rules")["groups"]
        self.assertIn("sutlab:http_requests:rate1m", [r["name"] for g in groups for r in g["rules"]])
        # 1 s scrapes
        with open(os.path.join(self.var, "monitoring", "prometheus.yml")) as f:
            self.assertIn("scrape_interval: 1s", f.read())

        out_dir = os.path.join(self.var, "steps")
        duration = 10
        run = subprocess.run([STEPS, "--tool", "wrk", "--levels", "8", "--duration", str(duration), "--warmup", "1",
                              "--url", "http://127.0.0.1:%d" % self.front, "--lab-var", self.var, "--out", out_dir],
                             env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:])
        with open(os.path.join(out_dir, "steps.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 1, rows)
        rps = float(rows[0]["rps"])
        self.assertGreater(rps, 0)  # the step's requests were answered (how many a second is the machine's)
        # The measured step ends when wrk writes its report (the log's mtime) and began `duration` s
        # earlier; the rate over its inner duration - 1 s (half a second off each end: the scrapes
        # are 1 s apart and the window's edges must not reach the idle time around the step).
        end = os.stat(os.path.join(out_dir, "level-8.log")).st_mtime
        time.sleep(max(0.0, end + 2 - time.time()))
        prom = self.scalar('sum(rate(http_requests_total{job="sutlab"}[%ds]))' % (duration - 1), at=end - 0.5)
        print("steps: %.0f req/s; Prometheus sum(rate(http_requests_total[%ds])) over the step: %.0f req/s (%+.1f %%)"
              % (rps, duration - 1, prom, (prom / rps - 1) * 100))
        self.assertLess(abs(prom / rps - 1), 0.10, "steps %.0f req/s, Prometheus %.0f" % (rps, prom))
        # steps found the lab's Prometheus by itself: the run's series are in its report
        with open(os.path.join(out_dir, "prometheus.csv")) as f:
            series = list(csv.DictReader(f))
        panels = {r["panel"] for r in series}
        self.assertTrue({"web", "machine", "db", "cache"} <= panels, panels)
        busiest = max(float(r["value"]) for r in series if r["series"] == "sutlab req/s by instance")
        self.assertGreater(busiest, rps * 0.5, "Prometheus's req/s over the run never came near steps' %.0f" % rps)
        with open(os.path.join(out_dir, "report.html")) as f:
            self.assertIn("The run in Prometheus", f.read())
        self.check_flip_report()
        self.check_down(self.monitoring_pids())

    def check_flip_report(self):
        """flip against the same lab (restarted with each arm's flags) finds the lab's Prometheus
        too: its report carries the run's series, and CPU per tier over time of both arms."""
        out_dir = os.path.join(self.var, "flip")
        run = subprocess.run([FLIP, "--keepalive-timeout", "0", "--scenario", "health", "--duration", "2",
                              "--warmup", "0", "--connections", "4", "--out", out_dir],
                             env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:])
        with open(os.path.join(out_dir, "prometheus.csv")) as f:
            series = list(csv.DictReader(f))
        self.assertTrue({"web", "machine", "db", "cache"} <= {r["panel"] for r in series}, series[:5])
        flip_rps = max(float(r["value"]) for r in series if r["series"] == "sutlab req/s by instance")
        print("flip's run in Prometheus: at most %.0f req/s by instance" % flip_rps)
        self.assertGreater(flip_rps, 0)  # Prometheus saw the run's requests
        with open(os.path.join(out_dir, "report.html")) as f:
            page = f.read()
        self.assertIn('<img alt="The run in Prometheus', page)
        self.assertIn('data-panel="prometheus"', page)
        self.assertIn('data-panel="cpu"', page)
        with open(os.path.join(out_dir, "cpu.csv")) as f:
            rows = list(csv.DictReader(f))
        # the lab's sutlab (its PostgreSQL is the harness's here, not the lab's own: no db tier)
        self.assertEqual(list(rows[0]), ["t", "run", "cpu_web_pct"])
        self.assertEqual({r["run"] for r in rows}, {"off r1", "on r1"})

    def test_haproxy_two_instances(self):
        out = lab(self.env, "up", "--instances", "2", "--lb", "haproxy", "--monitoring", "--", "--workers", "1").stdout
        self.assertIn("sutlab x 2 behind haproxy", out)
        got = self.wait_all_up({"sutlab", "haproxy", "node", "postgres", "redis", "prometheus"})
        self.assertEqual(sorted(i for j, i, _ in got if j == "sutlab"), ["127.0.0.1:%d" % p for p in self.backends])
        self.assertIn(("haproxy", "127.0.0.1:%d" % (self.prom + 4), "up"), got)
        # some traffic through the front, seen by HAProxy's exporter and by both instances
        for _ in range(20):
            with urllib.request.urlopen("http://127.0.0.1:%d/health_check" % self.front, timeout=5) as resp:
                self.assertEqual(resp.status, 200)
        time.sleep(2.5)
        servers = {r["metric"].get("server") for r in self.query('haproxy_server_status{proxy="sutlab"}')}
        self.assertEqual(servers, {"s1", "s2"})
        per_instance = {r["metric"]["instance"]: float(r["value"][1]) for r in
                        self.query('sum by (instance) (http_requests_total{route="/health_check"})')}
        self.assertEqual(set(per_instance), {"127.0.0.1:%d" % p for p in self.backends}, per_instance)
        self.assertTrue(all(v >= 5 for v in per_instance.values()), per_instance)
        status = lab(self.env, "status").stdout
        self.assertRegex(status, r"target haproxy +127\.0\.0\.1:%d +up" % (self.prom + 4))
        for p in self.backends:
            self.assertRegex(status, r"target sutlab +127\.0\.0\.1:%d +up" % p)
        pids = self.monitoring_pids()
        with open(os.path.join(self.var, "scale", "lb.pid")) as f:
            pids["haproxy"] = int(f.read().split()[0])
        self.check_down(pids)

    def test_netns_lab_two_instances(self):
        if os.geteuid() != 0:
            self.skipTest("network namespaces need root (CI runs as root)")
        missing = [t for t in ("ip", PG_BIN + "/initdb", "redis-server") if not shutil.which(t) and not os.path.exists(t)]
        if missing:
            self.fail("missing tools: %s (infra/lab test installs them)" % ", ".join(missing))
        prefix = "mon%d%s" % (os.getpid() % 100000, uuid.uuid4().hex[:4])
        names = ["%s-%s" % (prefix, n) for n in ("client", "web", "db")]
        self.env["SUTLAB_LAB_NETNS"] = prefix

        def namespaces():
            out = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
            return {line.split()[0] for line in out.splitlines() if line.strip()}

        def force_cleanup():   # after the down of setUp's cleanup: whatever of ours survived it
            for ns in set(names) & namespaces():
                for p in subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE, text=True).stdout.split():
                    try:
                        os.kill(int(p), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
                subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        self.addCleanup(force_cleanup)

        out = lab(self.env, "up", "--netns", "--instances", "2", "--lb", "haproxy", "--monitoring",
                  "--", "--workers", "1").stdout
        self.assertIn("Prometheus: http://127.0.0.1:%d" % self.prom, out)
        got = self.wait_all_up({"sutlab", "haproxy", "node", "postgres", "redis", "prometheus"}, seconds=30)
        web, db = names[1], names[2]
        self.assertEqual(sorted(i for j, i, _ in got if j == "sutlab"),
                         ["%s/127.0.0.1:%d" % (web, p) for p in self.backends])
        self.assertIn(("haproxy", "%s/127.0.0.1:%d" % (web, self.prom + 4), "up"), got)
        self.assertIn(("postgres", "%s/127.0.0.1:%d" % (db, self.prom + 2), "up"), got)
        self.assertEqual(self.scalar("pg_up"), 1.0)
        self.assertEqual(self.scalar("redis_up"), 1.0)
        # requests from the client namespace, to the front in the web one, counted on both instances
        before = {r["metric"]["instance"]: float(r["value"][1]) for r in
                  self.query('sum by (instance) (http_requests_total{route="/health_check"})')}
        url = "http://10.77.1.2:%d/health_check" % self.front
        proc = lab(self.env, "exec-client", "--", "sh", "-c",
                   'for i in $(seq 20); do curl -s -o /dev/null -w "%%{http_code}\\n" %s; done' % url, timeout=60)
        self.assertEqual(proc.stdout.split(), ["200"] * 20, proc.stdout)
        time.sleep(2.5)
        after = {r["metric"]["instance"]: float(r["value"][1]) for r in
                 self.query('sum by (instance) (http_requests_total{route="/health_check"})')}
        self.assertEqual(set(after), {"%s/127.0.0.1:%d" % (web, p) for p in self.backends}, after)
        for inst, n in after.items():
            self.assertGreaterEqual(n - before.get(inst, 0), 5, (before, after))
        status = lab(self.env, "status").stdout
        self.assertRegex(status, r"nsrelay +running +pid \d+")
        self.assertRegex(status, r"target sutlab +%s/127\.0\.0\.1:%d +up" % (web, self.backends[0]))
        pids = self.monitoring_pids(PROGS + ("nsrelay",))
        self.check_down(pids)
        self.assertEqual(set(names) & namespaces(), set())


if __name__ == "__main__":
    unittest.main(verbosity=2)
