#!/usr/bin/python3
"""Integration tests: the container lab (`infra/lab up --containers`), run for real with podman.

One stack for the class: the images built by infra/lab (a debootstrap Debian base, sutlab's image from
infra/deploy/container/Dockerfile, stand-ins for PostgreSQL, Redis and HAProxy), the compose file
started by podman-compose with 2 sutlab containers (`--redis-cache`) behind HAProxy, from a private
state directory, project name and port. Then, under wrk load through HAProxy, with a writer posting
stores all along:

- `podman kill` one sutlab: no failed request beyond those in flight on it; HAProxy marks it DOWN,
  and UP again after `podman start`;
- `podman stop` PostgreSQL: sutlab answers 503 (its own JSON, with Retry-After), then 200 again
  after `podman start`, with the same sutlab processes (nothing restarted);
- `podman pause` Redis: the listing keeps answering 200 from PostgreSQL (X-Cache: BYPASS);
- `infra/lab restart --containers` (one at a time, SIGTERM, graceful drain): no failed request;
- every write the server acknowledged (201) is in PostgreSQL afterwards, and after `up` again.

The stack comes up with `--monitoring` (infra/lib/monitoring.sh): Prometheus and Debian's exporters
run on this host, on private ports; before the drills, every target is up in Prometheus's
/api/v1/targets (each sutlab container at its own address, labelled with its name and replica
number, HAProxy's PROMEX exporter, the PostgreSQL and Redis exporters watching the containers,
the node exporter, Prometheus), pg_up and redis_up are 1, requests through HAProxy show in
http_requests_total once per replica, `status` lists each target's health; `up` again without
`--monitoring` stops it all and keeps the data.

Skipped, saying so, only when podman or podman-compose is not installed (infra/lab test installs
them) or when not root (rootful podman). The first run on a machine builds the images (debootstrap
and apt inside the builds: minutes); later runs find them cached.
"""

import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import uuid

from sutlab_testlib import port_is_free, source_root
from sutlab_lab.parsers import parse_wrk
from sutlab_lab.services.procs import pid_alive
# cleanups run even when meson's timeout terminates the run (test_infra's SIGTERM/SIGINT handler)
from test_infra import _EMERGENCY
from test_monitoring import free_run

ROOT = source_root()
LAB = os.path.join(ROOT, "infra", "lab")
N = 2
UP_TIMEOUT = 1500  # a first run builds every image

def engine_missing():
    missing = [t for t in ("podman", "podman-compose") if not shutil.which(t)]
    if missing:
        return "%s not installed (infra/lab test installs podman, podman-compose, runc, netavark)" % ", ".join(missing)
    if os.geteuid() != 0:
        return "the container lab runs rootful podman: run as root (CI does)"
    return None


def container_port():
    return free_run(1)


class Lab:
    """infra/lab with a private state directory, project name and front port."""

    def __init__(self):
        self.var = tempfile.mkdtemp(prefix="sutlab-clab-")
        self.project = "sutlab-t" + uuid.uuid4().hex[:6]
        self.port = container_port()
        self.prom = free_run(5)   # Prometheus and its four exporters' ports (up --monitoring)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
        self.env.update(SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_PROJECT=self.project,
                        SUTLAB_LAB_CONTAINER_PORT=str(self.port), SUTLAB_LAB_PROM_PORT=str(self.prom))
        self.conf = os.path.join(self.var, "containers", "containers.conf")

    def run(self, *args, timeout=180, check=True, env=None):
        proc = subprocess.run(["bash", LAB] + list(args), env=dict(self.env, **(env or {})), cwd=ROOT, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError("infra/lab %s exited %d:\n%s" % (" ".join(args), proc.returncode, proc.stdout[-5000:]))
        return proc

    def podman(self, *args, check=True, timeout=60):
        proc = subprocess.run(["podman"] + list(args), env=dict(self.env, CONTAINERS_CONF=self.conf),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError("podman %s exited %d: %s" % (" ".join(args), proc.returncode, proc.stderr[-2000:]))
        return proc.stdout.strip()

    def name(self, service, i=1):
        return "%s_%s_%d" % (self.project, service, i)

    def started_at(self, service, i=1):
        return self.podman("inspect", "--format", "{{.State.StartedAt}}", self.name(service, i))

    def ip(self, service, i=1):
        return self.podman("inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}",
                           self.name(service, i))

    def psql(self, sql):
        return self.podman("exec", self.name("postgres"), "psql", "-X", "-q", "-At", "-U", "postgres", "-d", "sutlab",
                           "-c", sql)

    def destroy(self):
        if os.path.exists(self.conf):
            subprocess.run(["bash", LAB, "down"], env=self.env, cwd=ROOT, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
            subprocess.run(["podman", "volume", "rm", "-f", "%s_pgdata" % self.project],
                           env=dict(self.env, CONTAINERS_CONF=self.conf), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
        shutil.rmtree(self.var, ignore_errors=True)


def http_req(host, port, method, path, body=None, headers=None, timeout=5):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


class Writer(threading.Thread):
    """POST /stores through the front, one request at a time, until stopped: the ids acknowledged
    (201) and the count of every other outcome."""

    def __init__(self, port, token):
        super().__init__(daemon=True)
        self.port, self.token = port, token
        self.acked, self.failed = [], 0
        self.halt = threading.Event()

    def run(self):
        headers = {"Content-Type": "application/json", "Authorization": "Token " + self.token}
        while not self.halt.is_set():
            name = "drill %s" % uuid.uuid4().hex[:12]
            body = json.dumps({"name": name, "phone": "02-123", "address": "Drill-ro 1", "introduction": "x",
                               "categoryId": 1})
            try:
                status, _, data = http_req("127.0.0.1", self.port, "POST", "/stores", body, headers, timeout=10)
            except (OSError, http.client.HTTPException):
                status, data = 0, b""
            if status == 201:
                self.acked.append((json.loads(data)["id"], name))
            else:
                self.failed += 1
            time.sleep(0.02)

    def stop(self):
        self.halt.set()
        self.join(30)


@unittest.skipIf(engine_missing(), engine_missing() or "")
class ContainerLab(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lab = Lab()
        _EMERGENCY.append(cls.lab.destroy)
        t0 = time.monotonic()
        try:  # no stack left behind when the class cannot start (tearDownClass does not run then)
            # a flag from the environment (SUTLAB_<NAME>) and one after -- (through SUTLAB_FLAGS)
            cls.up = cls.lab.run("up", "--containers", "--instances", str(N), "--monitoring", "--",
                                 "--count-pagination", timeout=UP_TIMEOUT, env={"SUTLAB_REDIS_CACHE": "on"})
            cls.up_seconds = time.monotonic() - t0
            sys.stderr.write("infra/lab up --containers: %.0f s\n" % cls.up_seconds)
            cls.acked = []
            status, _, body = http_req("127.0.0.1", cls.lab.port, "POST", "/api/users/login",
                                       json.dumps({"user": {"email": "user1@example.com", "password": "password"}}),
                                       {"Content-Type": "application/json"})
            assert status == 200, (status, body)
            cls.token = json.loads(body)["user"]["token"]
        except BaseException:
            cls.lab.destroy()
            _EMERGENCY.remove(cls.lab.destroy)
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lab.destroy()
        _EMERGENCY.remove(cls.lab.destroy)

    # -- helpers

    def get(self, path, host="127.0.0.1", port=None, timeout=5):
        return http_req(host, port or self.lab.port, "GET", path, timeout=timeout)

    def lb_states(self):
        _, _, body = self.get("/_lb/haproxy;csv")
        return {row[1]: row[17] for row in (line.split(",") for line in body.decode().splitlines())
                if len(row) > 17 and row[0] == "sutlab" and row[1] not in ("FRONTEND", "BACKEND")
                and not row[17].startswith("MAINT")}

    def wait_for(self, what, predicate, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if predicate():
                return time.monotonic()
            time.sleep(0.1)
        self.fail("%s: not within %d s" % (what, seconds))

    def up_count(self):
        return sum(1 for s in self.lb_states().values() if s == "UP")

    def start_wrk(self, path, seconds, connections=32):
        return subprocess.Popen(["wrk", "-t2", "-c%d" % connections, "-d%ds" % seconds, "--timeout", "5s",
                                 "http://127.0.0.1:%d%s" % (self.lab.port, path)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def finish_wrk(self, proc, seconds):
        out, _ = proc.communicate(timeout=seconds + 30)
        self.assertEqual(proc.returncode, 0, out)
        res = parse_wrk(out)
        sys.stderr.write("  wrk: %d requests, %.0f/s, %d errors %s, max %.0f ms\n"
                         % (res["requests"], res["rps"], res["errors"], res["error_kinds"], res["max"] or 0))
        return res

    def start_writer(self):
        w = Writer(self.lab.port, self.token)
        w.start()
        self.addCleanup(w.stop)
        return w

    def stop_writer(self, w):
        w.stop()
        type(self).acked.extend(w.acked)
        self.assertGreater(len(w.acked), 10, "the writer got too few writes through")
        return w

    def prom_api(self, path, **params):
        status, _, body = http_req("127.0.0.1", self.lab.prom, "GET",
                                   "/api/v1/%s?%s" % (path, urllib.parse.urlencode(params)))
        self.assertEqual(status, 200, body)
        doc = json.loads(body)
        self.assertEqual(doc["status"], "success", doc)
        return doc["data"]

    def prom_targets(self):
        return self.prom_api("targets", state="active")["activeTargets"]

    # -- the monitoring (before the drills: every container as up made it)

    def test_1_monitoring(self):
        t0 = time.monotonic()
        self.assertIn("Prometheus: http://127.0.0.1:%d" % self.lab.prom, self.up.stdout)
        sutlabs = {self.lab.name("sutlab", i): (str(i), self.lab.ip("sutlab", i)) for i in range(1, N + 1)}
        jobs = {"sutlab", "haproxy", "node", "postgres", "redis", "prometheus"}
        deadline = time.monotonic() + 20
        while True:
            targets = self.prom_targets()
            got = sorted((t["labels"]["job"], t["labels"]["instance"], t["health"]) for t in targets)
            if ({j for j, _, _ in got} == jobs and len(got) == len(jobs) + N - 1
                    and all(h == "up" for _, _, h in got)):
                break
            self.assertLess(time.monotonic(), deadline, "targets not all up: %s" % got)
            time.sleep(0.5)
        # each sutlab container at its own address on the container network, named, numbered
        seen = {}
        for t in targets:
            if t["labels"]["job"] == "sutlab":
                self.assertEqual(t["scrapeInterval"], "1s")
                seen[t["labels"]["instance"]] = (t["labels"].get("replica"),
                                                 urllib.parse.urlsplit(t["scrapeUrl"]).hostname)
        self.assertEqual(seen, sutlabs)
        haproxy = [t for t in targets if t["labels"]["job"] == "haproxy"]
        self.assertEqual([(t["labels"]["instance"], urllib.parse.urlsplit(t["scrapeUrl"]).netloc) for t in haproxy],
                         [(self.lab.name("haproxy"), "%s:8404" % self.lab.ip("haproxy"))])
        # the exporters watch the lab's own PostgreSQL and Redis containers
        for expr in ("pg_up", "redis_up"):
            result = self.prom_api("query", query=expr)["result"]
            self.assertEqual([float(r["value"][1]) for r in result], [1.0], (expr, result))
        for svc in ("postgres", "redis"):
            with open(os.path.join(self.lab.var, "monitoring", "%s-exporter.addr" % svc)) as f:
                self.assertEqual(f.read().strip(), self.lab.ip(svc))
        groups = self.prom_api("rules")["groups"]
        self.assertIn("sutlab:http_requests:rate1m", [r["name"] for g in groups for r in g["rules"]])
        # requests through HAProxy: a series per replica, each with its share
        def per_replica():
            return {r["metric"].get("replica"): float(r["value"][1]) for r in self.prom_api(
                "query", query='sum by (replica) (http_requests_total{job="sutlab",route="/health_check"})')["result"]}
        before = per_replica()
        for _ in range(20):
            self.assertEqual(self.get("/health_check")[0], 200)
        time.sleep(2.5)
        after = per_replica()
        self.assertEqual(set(after), {str(i) for i in range(1, N + 1)}, after)
        for replica, n in after.items():
            self.assertGreaterEqual(n - before.get(replica, 0), 5, (before, after))
        active = self.prom_api("query", query='haproxy_backend_active_servers{job="haproxy",proxy="sutlab"}')["result"]
        self.assertEqual([float(r["value"][1]) for r in active], [float(N)], active)
        status = self.lab.run("status").stdout
        for name in sutlabs:
            self.assertRegex(status, r"target sutlab +%s +up" % re.escape(name))
        self.assertRegex(status, r"target haproxy +%s +up" % re.escape(self.lab.name("haproxy")))
        self.assertRegex(status, r"target postgres +127\.0\.0\.1:%d +up" % (self.lab.prom + 2))
        self.assertRegex(status, r"podman-api +running +pid \d+")
        sys.stderr.write("  monitoring checked in %.1f s\n" % (time.monotonic() - t0))

    # -- the stack

    def test_1_stack(self):
        out = self.up.stdout
        self.assertIn("container lab is up: http://127.0.0.1:%d" % self.lab.port, out)
        m = re.search(r"image localhost/sutlab:\S+: (\d+) MB", out)
        self.assertIsNotNone(m, out)
        self.assertLess(int(m.group(1)), 150, "the runtime image should carry no compilers")
        self.assertIn("--redis-cache=on", out)
        self.check_flags_in_every_replica()
        seen = set()
        for _ in range(8):
            status, headers, body = self.get("/health_check")
            self.assertEqual((status, body), (200, b"ok"))
            seen.add(headers.get("x-sutlab-backend"))
        self.assertEqual(seen, {"s1", "s2"})
        status, headers, body = self.get("/stores?categoryId=1")
        self.assertEqual(status, 200, body)
        self.assertTrue(json.loads(body))
        for i in range(1, N + 1):
            name = self.lab.name("sutlab", i)
            self.assertEqual(self.lab.podman("exec", name, "id", "-u"), "10001")
            self.assertEqual(self.lab.podman("inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", name), "true")
            proc = subprocess.run(["podman", "exec", name, "touch", "/usr/x"], capture_output=True, text=True,
                                  env=dict(self.lab.env, CONTAINERS_CONF=self.lab.conf))
            self.assertIn("Read-only file system", proc.stderr)
            self.assertIn("/health_check", self.lab.podman("inspect", "--format", "{{json .Config.Healthcheck}}", name))
            self.lab.podman("healthcheck", "run", name)
        # only HAProxy is published, on the loopback address
        self.assertEqual(self.lab.podman("port", self.lab.name("haproxy")), "8080/tcp -> 127.0.0.1:%d" % self.lab.port)
        self.assertEqual(self.lab.podman("port", self.lab.name("postgres")), "")
        status = self.lab.run("status").stdout
        self.assertIn("container lab  %s  %d x sutlab" % (self.lab.project, N), status)
        for i in range(1, N + 1):
            self.assertRegex(status, r"%s\s+Up .*\(healthy\)" % re.escape(self.lab.name("sutlab", i)))
        logs = self.lab.run("logs").stdout
        self.assertIn("serving http://0.0.0.0:8080", logs)

    def check_flags_in_every_replica(self):
        """SUTLAB_REDIS_CACHE=on from up's environment and --count-pagination after -- reached each
        replica: its own /metrics, at its own address, says so."""
        for i in range(1, N + 1):
            status, _, body = http_req(self.lab.ip("sutlab", i), 8080, "GET", "/metrics")
            self.assertEqual(status, 200)
            info = [line for line in body.decode().splitlines() if line.startswith("sutlab_build_info")]
            self.assertEqual(len(info), 1, body[:500])
            self.assertIn("--redis-cache=on", info[0], "replica %d" % i)
            self.assertIn("--count-pagination=on", info[0], "replica %d" % i)

    # -- the drills, under load

    def test_2_kill_one_sutlab(self):
        self.wait_for("both backends UP", lambda: self.up_count() == N, 30)
        writer = self.start_writer()
        wrk = self.start_wrk("/health_check", 10)
        time.sleep(2)
        victim = self.lab.name("sutlab", 2)
        self.lab.podman("kill", victim)
        t_kill = time.monotonic()
        t_down = self.wait_for("HAProxy ejects the killed container", lambda: self.up_count() == N - 1, 10)
        time.sleep(1)
        self.lab.podman("start", victim)
        t_start = time.monotonic()
        t_up = self.wait_for("HAProxy takes it back", lambda: self.up_count() == N, 20)
        res = self.finish_wrk(wrk, 10)
        self.stop_writer(writer)
        sys.stderr.write("  kill: ejected after %.1f s, back %.1f s after podman start; writer %d acked, %d failed; "
                         "wrk %d requests\n" % (t_down - t_kill, t_up - t_start, len(writer.acked), writer.failed,
                                                 res["requests"]))
        # at most one request in flight per connection on the killed container: half of them
        self.assertLessEqual(res["errors"], 16, res)
        self.assertLessEqual(writer.failed, 1)
        self.assertGreater(res["requests"], 0)  # the load went on through the drill (how much is the machine's)

    def test_3_stop_postgres(self):
        before = [self.lab.started_at("sutlab", i) for i in range(1, N + 1)]
        ips = [self.lab.ip("sutlab", i) for i in range(1, N + 1)]
        self.lab.podman("stop", self.lab.name("postgres"), timeout=60)
        try:
            for ip in ips:   # sutlab's own answer, from the container network
                status, headers, body = self.get("/stores?categoryId=2", host=ip, port=8080, timeout=10)
                self.assertEqual(status, 503, body)
                self.assertIn("retry-after", headers)
                self.assertIn(b'"errors"', body)
                status, _, _ = self.get("/readyz", host=ip, port=8080)
                self.assertEqual(status, 503)
            status, _, _ = self.get("/stores?categoryId=2", timeout=10)
            self.assertEqual(status, 503)
            self.wait_for("HAProxy ejects the backends whose /readyz fails", lambda: self.up_count() == 0, 10)
        finally:
            self.lab.podman("start", self.lab.name("postgres"), timeout=60)
        t0 = time.monotonic()
        t1 = self.wait_for("the listing answers 200 again",
                           lambda: self.get("/stores?categoryId=2", timeout=10)[0] == 200, 60)
        sys.stderr.write("  postgres: listing 200 again %.1f s after podman start\n" % (t1 - t0))
        self.wait_for("every backend back in rotation", lambda: self.up_count() == N, 30)
        self.assertEqual([self.lab.started_at("sutlab", i) for i in range(1, N + 1)], before,
                         "a sutlab container was restarted")
        writer = self.start_writer()
        time.sleep(1)
        self.stop_writer(writer)
        self.assertEqual(writer.failed, 0)

    def test_4_pause_redis(self):
        for _ in range(3):
            status, headers, _ = self.get("/stores?categoryId=3")
        self.assertEqual((status, headers.get("x-cache")), (200, "HIT"))
        self.lab.podman("pause", self.lab.name("redis"))
        try:
            wrk = self.start_wrk("/stores?categoryId=3", 5, connections=8)
            for _ in range(10):
                t0 = time.monotonic()
                status, headers, body = self.get("/stores?categoryId=3")
                self.assertEqual(status, 200, body)
                self.assertEqual(headers.get("x-cache"), "BYPASS")
                self.assertLess(time.monotonic() - t0, 2.0)
            res = self.finish_wrk(wrk, 5)
            self.assertEqual(res["errors"], 0, res)
            # each instance names Redis down yet stays ready, so HAProxy keeps them all
            for i in range(1, N + 1):
                status, _, body = self.get("/readyz", host=self.lab.ip("sutlab", i), port=8080)
                self.assertEqual((status, json.loads(body)), (200, {"db": "ok", "redis": "down"}))
            self.assertEqual(self.up_count(), N)
        finally:
            self.lab.podman("unpause", self.lab.name("redis"))
        self.wait_for("cache hits again", lambda: self.get("/stores?categoryId=3")[1].get("x-cache") == "HIT", 10)

    def test_5_rolling_restart(self):
        before = [self.lab.started_at("sutlab", i) for i in range(1, N + 1)]
        writer = self.start_writer()
        wrk = self.start_wrk("/health_check", 30)
        time.sleep(1)
        out = self.lab.run("restart", "--containers", timeout=120).stdout
        if wrk.poll() is None:
            wrk.send_signal(signal.SIGINT)   # wrk reports what it did so far
        res = self.finish_wrk(wrk, 30)
        self.stop_writer(writer)
        for i in range(1, N + 1):
            self.assertIn("sutlab %d: SIGTERM, exited 0" % i, out)
            self.assertIn("sutlab %d: back in rotation" % i, out)
        after = [self.lab.started_at("sutlab", i) for i in range(1, N + 1)]
        self.assertTrue(all(a != b for a, b in zip(before, after)), (before, after))
        self.assertEqual(res["errors"], 0, res)
        self.assertEqual(writer.failed, 0)

    # -- afterwards

    def test_6_acknowledged_writes_kept(self):
        self.assertGreater(len(self.acked), 30)
        rows = dict(line.split("|", 1) for line in self.lab.psql(
            "SELECT id, name FROM stores WHERE name LIKE 'drill %'").splitlines())
        missing = [(i, n) for i, n in self.acked if rows.get(str(i)) != n]
        self.assertEqual(missing, [], "acknowledged writes lost")

    def test_7_up_again(self):
        mon = os.path.join(self.lab.var, "monitoring")
        pids = {}
        for prog in ("prometheus", "podman-api", "node-exporter", "postgres-exporter", "redis-exporter"):
            with open(os.path.join(mon, prog + ".pid")) as f:
                pids[prog] = int(f.read().split()[0])
        t0 = time.monotonic()
        out = self.lab.run("up", "--containers", "--instances", "1", timeout=UP_TIMEOUT).stdout
        sys.stderr.write("  up again (1 instance, images cached): %.0f s\n" % (time.monotonic() - t0))
        self.assertIn("1 x sutlab behind HAProxy", out)
        names = self.lab.podman("ps", "-a", "--filter", "label=io.podman.compose.project=%s" % self.lab.project,
                                "--format", "{{.Names}}").split()
        self.assertEqual(sorted(n for n in names if "_sutlab_" in n), [self.lab.name("sutlab", 1)])
        self.assertIn("--redis-cache=off", out)   # no flags after --: none carried over
        rows = set(self.lab.psql("SELECT id FROM stores WHERE name LIKE 'drill %'").split())
        self.assertTrue({str(i) for i, _ in self.acked} <= rows, "the database volume was not kept")
        self.assertEqual(self.get("/health_check")[0], 200)
        # up without --monitoring stopped the monitoring, and kept its data
        self.assertEqual([p for p, pid in pids.items() if pid_alive(pid)], [])
        self.assertTrue(port_is_free(self.lab.prom))
        self.assertFalse(os.path.exists(os.path.join(mon, "podman.sock")))
        self.assertTrue(os.path.isdir(os.path.join(mon, "data", "wal")))

    def test_8_reseed(self):
        """infra/lab seed SIZE --containers: small, then back to tiny, read through the front."""
        for size, articles in (("small", 10000), ("tiny", 50)):
            out = self.lab.run("seed", size, "--containers", timeout=600).stdout
            self.assertIn("seeded: %s (the container lab)" % size, out)
            self.assertEqual(self.lab.psql("SELECT count(*) FROM articles"), str(articles))
            status, _, body = self.get("/api/articles?limit=1")
            self.assertEqual(status, 200, body)
            self.assertEqual(len(json.loads(body)["articles"]), 1)


if __name__ == "__main__":
    unittest.main()
