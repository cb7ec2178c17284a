#!/usr/bin/python3
"""Integration tests: the scaled labs of infra/lab and the offline validation of infra/deploy.

- The single-server lab's `up --listen ADDR` (an address besides loopback, kept by restart, gone
  with the next plain up) and `up --admin` (a 0600 token, the admin listener on loopback only).
- HAProxy and nginx fronts with 2 sutlab instances (`infra/lab up --instances 2 --lb ...`): requests
  reach both (X-Sutlab-Backend and each backend's own http_requests_total), `status` shows each
  backend's /readyz, one stopped instance leaves the front answering 200 (HAProxy's /readyz health
  check ejects it), nginx gzips JSON and keeps connections to the upstreams open.
- The network-namespace lab (`infra/lab up --netns [--rate R]`, `exec-client`, `down`): the client
  namespace reaches the web tier, which reaches the database tier; the client cannot reach the
  database; a tc tbf cap of 10mbit makes a 5 MB download take over 3 s where it otherwise takes a
  fraction of a second; `down` leaves no namespace and no process. Nothing here ever sends a packet
  to a lab address from the root namespace: every such request runs through `infra/lab exec-client`.
- Offline: `docker-compose config -q` on the compose file (and HAProxy's check of its config), the
  Kubernetes manifests (every kustomization rendered and checked against the schemas of the npm
  package kubernetes-models@4, installed here into var/cache/), the Prometheus configs, rules and
  Grafana dashboard (metric names checked against a live /metrics), the systemd units
  (`systemd-analyze verify` and `security --offline`), the Dockerfile (stages, user, runtime
  libraries against the binary's own, HEALTHCHECK run for real) and the seeding scripts of the
  compose file and the Kubernetes Job (run for real against a fresh database, twice).

Run as root under loadscripts/sutlab_lab/services/with-services (SUTLAB_TEST_DB_URL / SUTLAB_TEST_REDIS_URL), with
haproxy, nginx-light, iproute2, docker-compose, nodejs, npm and systemd installed (infra/lab test
installs them). Every lab runs from its own state directory, ports and namespace names, so it
collides neither with a running lab nor with another test; namespaces are removed even when a test
fails or the run is killed (SIGTERM).
"""

import collections
import fcntl
import gzip
import http.client
import csv
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import uuid

from pgtest import FreshDatabase, fresh_database, server_url
from sutlab_testlib import (SANITIZER_MARKERS, Server, free_port, parse_metrics, pid_alive, port_is_free, sutlab_bin,
                            source_root)

ROOT = source_root()
LAB = os.path.join(ROOT, "infra", "lab")
DEPLOY = os.path.join(ROOT, "infra", "deploy")
NPM_PACKAGES = os.path.join(DEPLOY, "validate", "package.json")

# Cleanups that must run even when the process is terminated (meson's timeout sends SIGTERM).
_EMERGENCY = []


def _on_signal(signum, _frame):
    for fn in list(_EMERGENCY):
        try:
            fn()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def is_root():
    return os.geteuid() == 0


def need_tools(test, *tools):
    missing = [t for t in tools if not shutil.which(t) and not os.path.exists(t)]
    if missing:
        test.fail("missing tools: %s (infra/lab test installs them)" % ", ".join(missing))


def lab_env(**extra):
    """The environment of an infra/lab run: ours, minus every SUTLAB_* variable, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
    env["SUTLAB_LAB_BIN"] = sutlab_bin()
    env.update({k: str(v) for k, v in extra.items()})
    return env


def lab(env, *args, timeout=120, check=True):
    proc = subprocess.run(["bash", LAB] + list(args), env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError("infra/lab %s exited %d:\n%s" % (" ".join(args), proc.returncode, proc.stdout[-4000:]))
    return proc


def http_get(port, path, headers=None, host="127.0.0.1", timeout=5):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def counter(port, name, **labels):
    """Sum of the samples of `name` on 127.0.0.1:port/metrics whose labels include `labels`."""
    status, _, body = http_get(port, "/metrics")
    assert status == 200, status
    return parse_metrics(body.decode(), check=False).total(name, **labels)


def two_free_ports():
    """(front, backend base): base and base + 1 free, all three distinct. The base is drawn below
    the ephemeral range (32768 and up on Linux): next to a port the kernel just handed out, the
    neighbour is often held by one of the thousands of TIME_WAIT sockets earlier tests leave."""
    rnd = random.Random()
    for _ in range(200):
        front, base = free_port(), rnd.randrange(20000, 32000)
        if len({front, base, base + 1}) == 3 and port_is_free(base) and port_is_free(base + 1):
            return front, base
    raise AssertionError("no free ports")


def pids_in(pidfiles):
    out = []
    for f in pidfiles:
        try:
            with open(f) as fh:
                out.append(int(fh.read().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def sanitizer_lines(logdir):
    """Sanitizer reports in the lab's logs (the ASan build runs these tests too)."""
    hits = []
    for name in sorted(os.listdir(logdir)) if os.path.isdir(logdir) else []:
        path = os.path.join(logdir, name)
        if not os.path.isfile(path):
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        for m in SANITIZER_MARKERS:
            if m in text:
                i = text.find(m)
                hits.append("%s: %s" % (name, text[max(0, i - 200):i + 2000]))
    return hits


# ---- load balancers ------------------------------------------------------------------------------


class LoadBalancers(unittest.TestCase):
    """`infra/lab up --instances 2 --lb haproxy|nginx` against the harness's PostgreSQL and Redis."""

    def start_lab(self, lb, *extra):
        need_tools(self, "curl", "haproxy" if lb == "haproxy" else "nginx")
        db = fresh_database(self)
        self.front, self.base = two_free_ports()
        self.var = tempfile.mkdtemp(prefix="sutlab-infra-lb-")
        self.env = lab_env(SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_PORT=self.front,
                           SUTLAB_LAB_BACKEND_PORT=self.base, SUTLAB_LAB_DB_URL=db,
                           SUTLAB_LAB_REDIS_URL=os.environ.get("SUTLAB_TEST_REDIS_URL", "redis://127.0.0.1:1"))

        def cleanup():
            lab(self.env, "down", check=False, timeout=60)
            shutil.rmtree(self.var, ignore_errors=True)
        _EMERGENCY.append(cleanup)
        self.addCleanup(_EMERGENCY.remove, cleanup)
        self.addCleanup(cleanup)
        out = lab(self.env, "up", "--instances", "2", "--lb", lb, *extra, "--", "--workers", "1").stdout
        self.assertIn("sutlab x 2 behind %s" % lb, out)
        self.backends = [self.base, self.base + 1]
        return out

    def front_get(self, path="/health_check", headers=None):
        return http_get(self.front, path, headers)

    def check_both_backends_serve(self, header_values):
        before = [counter(p, "http_requests_total", route="/health_check") for p in self.backends]
        seen = collections.Counter()
        for _ in range(20):
            status, headers, body = self.front_get()
            self.assertEqual((status, body), (200, b"ok"))
            seen[headers.get("x-sutlab-backend")] += 1
        self.assertEqual(set(seen), set(header_values), seen)
        for value in header_values:
            self.assertGreaterEqual(seen[value], 5, seen)
        after = [counter(p, "http_requests_total", route="/health_check") for p in self.backends]
        for i, (b, a) in enumerate(zip(before, after)):
            self.assertGreaterEqual(a - b, 5, "backend %d counted %s requests of 20" % (i + 1, a - b))
        self.assertEqual(sum(after) - sum(before), 20)

    def check_status_lists_backends(self, extra=""):
        out = lab(self.env, "status").stdout
        for i, port in enumerate(self.backends, 1):
            self.assertRegex(out, r"backend %d +running +pid \d+ +http://127\.0\.0\.1:%d +/readyz 200 "
                                  r"\{\"db\":\"ok\"[^\n]*%s" % (i, port, extra), out)
        return out

    def stop_backend_2_front_still_answers(self, survivor):
        lab(self.env, "instance", "stop", "2")
        self.assertTrue(port_is_free(self.backends[1]))
        # at once: a refused connection is retried on the other backend
        for _ in range(20):
            status, headers, _ = self.front_get()
            self.assertEqual(status, 200)
            # nginx names every upstream it tried: the refused one, then the survivor
            self.assertEqual(headers.get("x-sutlab-backend", "").split(", ")[-1], survivor)

    def finish(self):
        pidfiles = [os.path.join(self.var, "scale", f) for f in ("lb.pid", "sutlab-1.pid", "sutlab-2.pid")]
        pids = pids_in(pidfiles)
        self.assertGreaterEqual(len(pids), 2)
        out = lab(self.env, "down").stdout
        self.assertIn("lab stopped", out)
        for pid in pids:
            self.assertFalse(pid_alive(pid), "pid %d still runs after down" % pid)
        for port in [self.front] + self.backends:
            self.assertTrue(port_is_free(port), "port %d still open after down" % port)
        self.assertEqual(sanitizer_lines(os.path.join(self.var, "log")), [])

    def test_haproxy_two_instances(self):
        out = self.start_lab("haproxy", "--listen", "127.0.0.2")
        self.assertIn("sutlab x 2 behind haproxy: http://127.0.0.2:%d" % self.front, out)
        self.assertEqual(http_get(self.front, "/health_check", host="127.0.0.2")[0], 200)  # the front's second bind
        self.check_both_backends_serve({"s1", "s2"})
        self.check_status_lists_backends(extra="haproxy: UP")
        # HAProxy's own view
        status, _, body = self.front_get("/_lb/haproxy;csv")
        self.assertEqual(status, 200)
        rows = [r.split(",") for r in body.decode().splitlines() if r.startswith("sutlab,s")]
        self.assertEqual(sorted((r[1], r[17]) for r in rows), [("s1", "UP"), ("s2", "UP")])
        self.stop_backend_2_front_still_answers("s1")
        # the /readyz health check ejects it: status shows it DOWN
        deadline = time.monotonic() + 10
        while True:
            out = lab(self.env, "status").stdout
            if re.search(r"backend 2 +stopped .*haproxy: DOWN", out):
                break
            self.assertLess(time.monotonic(), deadline, "backend 2 never DOWN in HAProxy:\n" + out)
            time.sleep(0.3)
        self.assertRegex(out, r"backend 1 +running .*/readyz 200 .*haproxy: UP")
        for _ in range(10):
            self.assertEqual(self.front_get()[0], 200)
        # back in rotation
        lab(self.env, "instance", "start", "2")
        self.check_status_lists_backends(extra="haproxy: UP")
        self.check_both_backends_serve({"s1", "s2"})
        self.finish()

    def test_nginx_two_instances(self):
        self.start_lab("nginx")
        names = {"127.0.0.1:%d" % p for p in self.backends}
        self.check_both_backends_serve(names)
        self.check_status_lists_backends()
        # gzip of a JSON response (the article list of the fixtures, well over gzip_min_length)
        status, headers, body = self.front_get("/api/articles?limit=20", {"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("content-encoding"), "gzip", headers)
        self.assertIn("accept-encoding", headers.get("vary", "").lower())
        doc = json.loads(gzip.decompress(body))
        self.assertGreater(len(doc["articles"]), 0)
        status, headers, plain = self.front_get("/api/articles?limit=20")
        self.assertNotIn("content-encoding", headers)
        self.assertEqual(json.loads(plain), doc)
        self.assertLess(len(body), len(plain))
        # keep-alive to the upstreams: idle connections from nginx stay open after the requests
        for _ in range(10):
            self.front_get()
        out = subprocess.run(["ss", "-Htn", "state", "established"], stdout=subprocess.PIPE, text=True).stdout
        upstream = [line for line in out.splitlines()
                    if re.search(r"\s127\.0\.0\.1:(%d|%d)\s*$" % tuple(self.backends), line)]
        self.assertGreaterEqual(len(upstream), 1, "no kept-alive upstream connection:\n" + out)
        self.stop_backend_2_front_still_answers("127.0.0.1:%d" % self.backends[0])
        self.finish()

    def test_nginx_cpu_budget_is_the_lb_capacity(self):
        """--lb-cpus 0: nginx on core 0 with one worker; loadscripts/steps reads one core as the
        lb tier's capacity and shows its CPU (a 2 s step)."""
        need_tools(self, "wrk")
        out = self.start_lab("nginx", "--lb-cpus", "0")
        self.assertIn("CPU budget: cores 0, worker_processes 1", out)
        with open(os.path.join(self.var, "scale", "nginx", "nginx.conf")) as f:
            self.assertRegex(f.read(), r"\nworker_processes 1;\n")
        master = pids_in([os.path.join(self.var, "scale", "lb.pid")])[0]
        self.assertEqual(os.sched_getaffinity(master), {0})
        steps_out = tempfile.mkdtemp(prefix="sutlab-steps-lb-")
        self.addCleanup(shutil.rmtree, steps_out, ignore_errors=True)
        p = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "loadscripts", "steps"), "--tool", "wrk",
                            "--url", "http://127.0.0.1:%d" % self.front, "--lab-var", self.var, "--levels", "8",
                            "--duration", "2", "--warmup", "0", "--prometheus", "none", "--out", steps_out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")})
        self.assertEqual(p.returncode, 0, p.stdout[-3000:])
        self.assertIn("| cpu web | cpu lb |", p.stdout)
        with open(os.path.join(steps_out, "steps.csv"), newline="") as f:
            row = next(csv.DictReader(f))
        self.assertEqual(row["capacity_lb"], "1", row)
        # nginx proxied the step's requests and was sampled doing it (how fast is the machine's)
        print("steps through nginx: %s req/s, nginx %s %% of a core" % (row["rps"], row["cpu_lb_pct"]))
        self.assertGreater(float(row["cpu_lb_pct"]), 0, row)
        self.assertGreater(float(row["rps"]), 0, row)
        self.finish()


# ---- the single-server lab: where it listens, its admin listener -----------------------------------


class PlainLab(unittest.TestCase):
    """`infra/lab up --listen ADDR --admin` against the harness's PostgreSQL and Redis. 127.0.0.2 is
    an address of this machine other than 127.0.0.1 (all of 127/8 is loopback on Linux): what
    answers there, the --listen listener answers."""

    ALSO = "127.0.0.2"

    def setUp(self):
        need_tools(self, "curl")
        self.port, self.admin = free_port(), free_port()
        self.var = tempfile.mkdtemp(prefix="sutlab-infra-plain-")
        self.env = lab_env(SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_PORT=self.port, SUTLAB_LAB_ADMIN_PORT=self.admin,
                           SUTLAB_LAB_DB_URL=fresh_database(self),
                           SUTLAB_LAB_REDIS_URL=os.environ.get("SUTLAB_TEST_REDIS_URL", "redis://127.0.0.1:1"))

        def cleanup():
            lab(self.env, "down", check=False, timeout=60)
            shutil.rmtree(self.var, ignore_errors=True)
        _EMERGENCY.append(cleanup)
        self.addCleanup(_EMERGENCY.remove, cleanup)
        self.addCleanup(cleanup)

    def answers(self, host, port):
        try:
            return http_get(port, "/health_check", host=host, timeout=2)[0] == 200
        except OSError:
            return False

    def test_listen_and_admin(self):
        out = lab(self.env, "up", "--listen", self.ALSO, "--admin", "--", "--workers", "1").stdout
        self.assertIn("sutlab is up: http://%s:%d" % (self.ALSO, self.port), out)
        self.assertIn("the admin listener, PostgreSQL and Redis stay on 127.0.0.1", out)
        self.assertTrue(self.answers(self.ALSO, self.port))
        self.assertTrue(self.answers("127.0.0.1", self.port))   # the lab's own checks and tools
        self.check_admin()
        lab(self.env, "restart")                                 # restart keeps both
        self.assertTrue(self.answers(self.ALSO, self.port))
        self.check_admin()
        lab(self.env, "up")                                      # up without --listen: loopback only
        self.assertFalse(self.answers(self.ALSO, self.port))
        self.assertTrue(self.answers("127.0.0.1", self.port))

    def check_admin(self):
        token_file = os.path.join(self.var, "admin.token")
        self.assertEqual(os.stat(token_file).st_mode & 0o777, 0o600)
        with open(token_file) as f:
            token = f.read().strip()
        self.assertRegex(token, r"^[0-9a-f]{64}$")
        status, _, body = http_get(self.admin, "/admin", {"Authorization": "Bearer " + token})
        self.assertEqual(status, 200, body)
        self.assertIn("count-pagination", json.loads(body)["flags"])
        self.assertFalse(self.answers(self.ALSO, self.admin), "the admin listener left loopback")

    def test_bad_listen_and_admin_combinations_are_one_line(self):
        for args, says in ((("--listen", "example.com"), "--listen takes an IP address"),
                           (("--listen", "0.0.0.0", "--netns"), "--listen is for the lab on this machine"),
                           (("--admin", "--instances", "2"), "--admin is for the single-server lab")):
            p = lab(self.env, "up", *args, check=False)
            self.assertEqual(p.returncode, 2, p.stdout)
            self.assertEqual(len(p.stdout.strip().splitlines()), 1, p.stdout)
            self.assertIn(says, p.stdout)


# ---- network namespaces --------------------------------------------------------------------------


class NetnsLab(unittest.TestCase):
    """`infra/lab up --netns`: client, web and db namespaces, tc tbf cap, exec-client, down."""

    def setUp(self):
        if not is_root():
            self.skipTest("network namespaces need root (CI runs as root)")
        need_tools(self, "ip", "tc", "curl", "/usr/lib/postgresql/15/bin/initdb", "redis-server")
        self.prefix = "slt%d%s" % (os.getpid() % 100000, uuid.uuid4().hex[:4])
        self.names = ["%s-%s" % (self.prefix, n) for n in ("client", "web", "db")]
        # PostgreSQL runs from here as the postgres user: a short path every user can traverse.
        self.var = tempfile.mkdtemp(prefix="sutlab-infra-ns-", dir="/tmp")
        os.chmod(self.var, 0o755)
        self.docroot = tempfile.mkdtemp(prefix="sutlab-infra-doc-", dir="/tmp")
        os.chmod(self.docroot, 0o755)
        with open(os.path.join(self.docroot, "big.bin"), "wb") as f:
            f.write(os.urandom(5 * 1000 * 1000))
        self.env = lab_env(SUTLAB_LAB_VAR=self.var, SUTLAB_LAB_NETNS=self.prefix)
        _EMERGENCY.append(self.force_cleanup)
        self.addCleanup(_EMERGENCY.remove, self.force_cleanup)
        self.addCleanup(self.force_cleanup)

    def namespaces(self):
        out = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
        return {line.split()[0] for line in out.splitlines() if line.strip()}

    def force_cleanup(self):
        """infra/lab down, then whatever of ours survived it: processes in our namespaces, the
        namespaces themselves."""
        try:
            lab(self.env, "down", check=False, timeout=60)
        except Exception:  # noqa: BLE001
            pass
        for ns in self.names:
            if ns not in self.namespaces():
                continue
            pids = subprocess.run(["ip", "netns", "pids", ns], stdout=subprocess.PIPE, text=True).stdout.split()
            for p in pids:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        shutil.rmtree(self.docroot, ignore_errors=True)
        shutil.rmtree(self.var, ignore_errors=True)

    def client(self, *cmd, timeout=60):
        return lab(self.env, "exec-client", "--", *cmd, timeout=timeout, check=False)

    def download_seconds(self):
        proc = self.client("curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}",
                           "--max-time", "30", "http://10.77.1.2:8080/big.bin")
        code, size, secs = proc.stdout.split()
        self.assertEqual((code, int(size)), ("200", 5 * 1000 * 1000), proc.stdout)
        return float(secs)

    def test_netns_lab(self):
        out = lab(self.env, "up", "--netns", "--", "--docroot", self.docroot, "--workers", "1").stdout
        self.assertTrue(set(self.names) <= self.namespaces(), out)
        pids = pids_in([os.path.join(self.var, "netns", "web", "sutlab-1.pid"),
                        os.path.join(self.var, "netns", "redis", "redis.pid")])
        self.assertEqual(len(pids), 2)
        self.check_tiers_isolated()
        self.check_rate_cap()
        self.check_steps_in_client_namespace()
        pids += self.check_scaled_web_tier()
        self.check_down(pids)

    def check_tiers_isolated(self):
        """The lab addresses exist only inside the namespaces; client -> web -> db works, client -> db
        does not; the database listens on its namespace address."""
        root_addrs = subprocess.run(["ip", "-o", "addr"], stdout=subprocess.PIPE, text=True).stdout
        self.assertNotIn("10.77.", root_addrs)
        client_addrs = self.client("ip", "-o", "addr").stdout
        self.assertIn("10.77.1.1/24", client_addrs)
        self.assertNotIn("10.77.1.2", client_addrs)
        # client -> web -> db: /readyz needs PostgreSQL in the db namespace
        proc = self.client("sh", "-c", 'curl -s -w " %{http_code}" "$SUTLAB_URL/readyz"')
        self.assertEqual(proc.stdout, '{"db":"ok","redis":"disabled"} 200', proc.stdout)
        proc = self.client("curl", "-s", "http://10.77.1.2:8080/stores/categories")
        self.assertTrue(proc.stdout.startswith("["), proc.stdout)   # seeded rows, read over the db link
        # the client has no route to the database tier
        proc = self.client("bash", "-c", "timeout 3 bash -c ': 3<>/dev/tcp/10.77.2.2/5432'")
        self.assertNotEqual(proc.returncode, 0, "the client namespace reaches PostgreSQL")
        # the database listens on its namespace address (checked from the db namespace itself)
        proc = subprocess.run(["ip", "netns", "exec", self.names[2], "/usr/lib/postgresql/15/bin/pg_isready",
                               "-h", "10.77.2.2", "-p", "5432"], stdout=subprocess.PIPE, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout)

    def check_rate_cap(self):
        # uncapped: a 5 MB file faster than the cap below lets it (4 s at 10 mbit/s; a fraction of a
        # second on loopback, printed): the one bound splits capped from not, whatever the machine
        fast = self.download_seconds()
        print("5 MB uncapped: %.2f s" % fast)
        self.assertLess(fast, 3.0)
        # capped at 10 mbit/s: 5 MB take 4 s
        out = lab(self.env, "up", "--netns", "--rate", "10mbit").stdout
        self.assertIn("capped at 10mbit", out)
        status = lab(self.env, "status").stdout
        self.assertRegex(status, r"client<->web link: 10mbit .*tbf")
        self.assertRegex(status, r"sutlab +running +pid \d+ +http://10\.77\.1\.2:8080 +/readyz 200")
        slow = self.download_seconds()
        self.assertGreater(slow, 3.0, "10mbit cap: 5 MB in %.2f s" % slow)
        self.assertLess(slow, 15.0)

    def check_steps_in_client_namespace(self):
        """steps in the client namespace, wrk with two threads (--load-workers): the capped link is
        a tier of its table, and the one that limits."""
        out_dir = os.path.join(self.var, "steps-net")
        proc = self.client("/usr/bin/python3", os.path.join(ROOT, "loadscripts", "steps"), "--tool", "wrk",
                           "--load-workers", "2", "--path", "/big.bin", "--levels", "4", "--duration", "3",
                           "--warmup", "0", "--timeout", "20", "--lab-var", self.var, "--out", out_dir, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:])
        with open(os.path.join(out_dir, "steps.csv")) as f:
            step = list(csv.DictReader(f))[0]
        self.assertEqual((step["net_iface"], float(step["net_capacity_Bps"])), ("to-web", 1.25e6), step)
        self.assertEqual(step["verdict"], "network", step)
        self.assertGreater(float(step["net_rx_Bps"]), 0.85 * 1.25e6, step)
        with open(os.path.join(out_dir, "level-4.log")) as f:
            self.assertIn("2 threads and 4 connections", f.read())

    def check_scaled_web_tier(self):
        """The scaled web tier inside the web namespace, behind nginx on the web address; returns
        the pids of the balancer and the instances."""
        out = lab(self.env, "up", "--netns", "--instances", "2", "--lb", "nginx").stdout
        self.assertRegex(out, r"front +nginx running .*http://10\.77\.1\.2:8080 +/health_check 200")
        self.assertIn("client<->web link: uncapped", out)
        self.assertNotIn("creating network namespaces", out)   # kept, with everything in them
        seen = set()
        for _ in range(6):
            proc = self.client("curl", "-s", "-D", "-", "-o", "/dev/null", "http://10.77.1.2:8080/health_check")
            m = re.search(r"(?im)^x-sutlab-backend: (\S+)\r?$", proc.stdout)
            self.assertTrue(m, proc.stdout)
            seen.add(m.group(1))
        self.assertEqual(seen, {"127.0.0.1:8081", "127.0.0.1:8082"})
        return pids_in([os.path.join(self.var, "netns", "web", f) for f in ("lb.pid", "sutlab-1.pid", "sutlab-2.pid")])

    def check_down(self, pids):
        """down deletes the namespaces and stops every pid of the lab, a leftover of exec-client too."""
        sleeper = subprocess.Popen(["bash", LAB, "exec-client", "--", "sleep", "300"], env=self.env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        out = lab(self.env, "down").stdout
        self.assertIn("deleting network namespaces", out)
        self.assertEqual(sleeper.wait(timeout=10) != 0, True)
        self.assertFalse(set(self.names) & self.namespaces(), "namespaces left: %s" % self.namespaces())
        for pid in pids:
            self.assertFalse(pid_alive(pid), "pid %d still runs after down" % pid)
        self.assertEqual(sanitizer_lines(os.path.join(self.var, "log")), [])
        proc = lab(self.env, "exec-client", "--", "true", check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("not up", proc.stdout)

# ---- offline validation --------------------------------------------------------------------------


def npm_modules():
    """node_modules with kubernetes-models@4 and js-yaml, installed once into var/cache/."""
    cache = os.path.join(ROOT, "var", "cache", "infra-npm")
    os.makedirs(cache, exist_ok=True)
    with open(NPM_PACKAGES) as f:
        wanted = json.load(f)["dependencies"]
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)

        def installed():
            for name, version in wanted.items():
                try:
                    with open(os.path.join(cache, "node_modules", name, "package.json")) as f:
                        if json.load(f)["version"] != version:
                            return False
                except (OSError, ValueError, KeyError):
                    return False
            return True
        if not installed():
            shutil.copy(NPM_PACKAGES, os.path.join(cache, "package.json"))
            env = dict(os.environ, npm_config_cache=os.path.join(cache, "npm-cache"),
                       npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false")
            proc = subprocess.run(["npm", "install", "--no-package-lock", "--omit=dev", "--loglevel=error"],
                                  cwd=cache, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=150)
            if proc.returncode != 0 or not installed():
                raise AssertionError("npm install of %s into %s failed (exit %d): the Kubernetes manifests "
                                     "cannot be validated without it:\n%s"
                                     % (", ".join("%s@%s" % kv for kv in wanted.items()), cache,
                                        proc.returncode, proc.stdout[-3000:]))
    return os.path.join(cache, "node_modules")


def node_env(modules):
    return dict(os.environ, NODE_PATH=modules)


def yaml_to_json(modules, text):
    proc = subprocess.run(["node", "-e", "const y=require('js-yaml');let s='';process.stdin.on('data',d=>s+=d);"
                           "process.stdin.on('end',()=>console.log(JSON.stringify(y.load(s))))"],
                          input=text, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=node_env(modules), timeout=30)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


class OfflineValidation(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.modules = None
        cls.npm_error = None
        if not shutil.which("npm") or not shutil.which("node"):
            cls.npm_error = "node and npm are needed (infra/lab test installs nodejs and npm)"
            return
        try:
            cls.modules = npm_modules()
        except (AssertionError, subprocess.TimeoutExpired, OSError) as e:
            cls.npm_error = str(e)

    def need_npm(self):
        if self.npm_error:
            self.fail(self.npm_error)
        return self.modules

    def metrics_dump(self):
        path = os.path.join(tempfile.mkdtemp(prefix="sutlab-infra-m-"), "metrics.txt")
        self.addCleanup(shutil.rmtree, os.path.dirname(path), True)
        srv = Server(extra_args=["--db-url", "postgresql://nobody@127.0.0.1:1/none"])
        try:
            srv.start()
            status, _, body = http_get(srv.port, "/metrics")
            self.assertEqual(status, 200)
            srv.finish()
        finally:
            srv.close()
        with open(path, "wb") as f:
            f.write(body)
        return path

    # -- compose

    def test_compose_file(self):
        need_tools(self, "docker-compose", "haproxy")
        modules = self.need_npm()
        compose = os.path.join(DEPLOY, "compose", "docker-compose.yml")
        proc = subprocess.run(["docker-compose", "-f", compose, "config", "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertEqual(proc.stdout.strip(), "")
        for profile_env in ({}, {"SUTLAB_REPLICAS": "4", "SUTLAB_SEED_SIZE": "tiny", "SUTLAB_FLAGS": "--redis-cache --gzip"}):
            proc = subprocess.run(["docker-compose", "-f", compose, "config"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=60, env=dict(os.environ, **profile_env))
            self.assertEqual(proc.returncode, 0, proc.stderr)
            cfg = yaml_to_json(modules, proc.stdout)
            svc = cfg["services"]
            self.assertTrue({"postgres", "redis", "seed", "sutlab", "haproxy"} <= set(svc), set(svc))
            self.assertRegex(svc["postgres"]["image"], r"^postgres:15")
            self.assertRegex(svc["redis"]["image"], r"^redis:7")
            self.assertEqual(svc["sutlab"]["deploy"]["replicas"], int(profile_env.get("SUTLAB_REPLICAS", 2)))
            # SUTLAB_FLAGS reaches every replica's command line; unset, "--" ends the flags
            self.assertEqual(svc["sutlab"]["command"], "serve " + profile_env.get("SUTLAB_FLAGS", "--"))
            self.assertEqual(svc["sutlab"]["depends_on"]["seed"]["condition"], "service_completed_successfully")
            self.assertEqual(svc["seed"]["depends_on"]["postgres"]["condition"], "service_healthy")
            self.assertEqual(svc["seed"]["environment"]["SEED_SIZE"], profile_env.get("SUTLAB_SEED_SIZE", "small"))
            # docker-compose 1.29 renders a port with a host address as "ADDR:PUBLISHED:TARGET/tcp"
            self.assertEqual(svc["haproxy"]["ports"], ["0.0.0.0:8080:8080/tcp"])
            self.assertEqual(svc["seed"]["build"]["dockerfile"], "infra/deploy/container/Dockerfile")
            self.assertEqual(os.path.realpath(svc["seed"]["build"]["context"]), os.path.realpath(ROOT))
            for name in ("seed", "sutlab"):
                for k in svc[name]["environment"]:
                    self.assertTrue(k.startswith("SUTLAB_") or k == "SEED_SIZE", k)
            binds = 0
            for s in svc.values():
                for v in s.get("volumes", []):
                    source = v.get("source", "") if isinstance(v, dict) else v.split(":")[0]
                    if source.startswith("/"):
                        binds += 1
                        self.assertTrue(os.path.exists(source), v)
            self.assertGreaterEqual(binds, 1)
        proc = subprocess.run(["haproxy", "-c", "-f", os.path.join(DEPLOY, "compose", "haproxy.cfg")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        self.assertEqual(proc.returncode, 0, proc.stdout)

    # -- the seeding scripts of the compose file and of the Kubernetes Job, run for real

    def run_seed_script(self, script, env_extra):
        bindir = tempfile.mkdtemp(prefix="sutlab-infra-bin-")
        self.addCleanup(shutil.rmtree, bindir, True)
        os.symlink(sutlab_bin(), os.path.join(bindir, "sutlab"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
        env["PATH"] = bindir + ":" + env.get("PATH", "/usr/bin:/bin")
        env.update(env_extra)
        return subprocess.run(["/bin/sh", "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=120)

    def check_seed_script(self, script, env_extra):
        with FreshDatabase() as url:
            env_extra = dict(env_extra, SUTLAB_DB_URL=url)
            first = self.run_seed_script(script, env_extra)
            self.assertEqual(first.returncode, 0, first.stdout)
            self.assertIn("seeded size tiny", first.stdout)
            again = self.run_seed_script(script, env_extra)
            self.assertEqual(again.returncode, 0, again.stdout)
            self.assertIn("already seeded: kept", again.stdout)
        broken = self.run_seed_script(script, dict(env_extra, SUTLAB_DB_URL="postgresql://nobody@127.0.0.1:1/none"))
        self.assertNotEqual(broken.returncode, 0, broken.stdout)

    def test_seed_scripts(self):
        server_url()  # under the harness
        modules = self.need_npm()
        with open(os.path.join(DEPLOY, "compose", "docker-compose.yml")) as f:
            compose = yaml_to_json(modules, f.read())
        script = compose["services"]["seed"]["command"][0].replace("$$", "$")
        self.check_seed_script(script, {"SEED_SIZE": "tiny"})
        with open(os.path.join(DEPLOY, "k8s", "base", "seed-job.yaml")) as f:
            job = yaml_to_json(modules, f.read())
        c = job["spec"]["template"]["spec"]["containers"][0]
        self.assertEqual(c["command"], ["/bin/sh", "-c"])
        self.check_seed_script(c["args"][0], {"SEED_ARGS": "--size tiny"})

    # -- Kubernetes, Prometheus, Grafana

    def test_k8s_prometheus_grafana(self):
        modules = self.need_npm()
        validator = os.path.join(DEPLOY, "validate", "validate.js")
        metrics = self.metrics_dump()
        proc = subprocess.run(["node", validator, "--metrics", metrics], env=node_env(modules),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        for needle in ("k8s/overlays/lab:", "k8s/overlays/external-db:", "k8s/base:", "StatefulSet",
                       "HorizontalPodAutoscaler", "Job", "grafana:", "all deployment files valid"):
            self.assertIn(needle, proc.stdout)
        # the validator is not vacuous: a copy with one typo per kind of check fails, naming each
        tmp = tempfile.mkdtemp(prefix="sutlab-infra-k8s-")
        self.addCleanup(shutil.rmtree, tmp, True)
        shutil.copytree(DEPLOY, os.path.join(tmp, "infra", "deploy"))
        shutil.copytree(os.path.join(ROOT, "loadscripts", "locust"), os.path.join(tmp, "loadscripts", "locust"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        mutations = [
            ("k8s/base/sutlab.yaml", "readinessProbe:", "readinesProbe:", "readinesProbe"),
            ("k8s/base/sutlab.yaml", "targetPort: http", "targetPort: web", "targetPort web"),
            ("k8s/overlays/lab/kustomization.yaml", "@postgres:5432", "@postgresx:5432", "postgresx"),
            ("k8s/base/hpa.yaml", "minReplicas: 2", "minReplicas: two", "minReplicas must be integer"),
            ("grafana/sutlab-dashboard.json", "http_connections_open", "http_connection_open", "http_connection_open"),
        ]
        for rel, old, new, _ in mutations:
            path = os.path.join(tmp, "infra", "deploy", rel)
            with open(path) as f:
                text = f.read()
            self.assertIn(old, text)
            with open(path, "w") as f:
                f.write(text.replace(old, new, 1))
        proc = subprocess.run(["node", os.path.join(tmp, "infra", "deploy", "validate", "validate.js"),
                               "--metrics", metrics, "--quiet"], env=node_env(modules),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        for _, _, _, message in mutations:
            self.assertIn(message, proc.stdout)

    # -- systemd

    def test_systemd_units(self):
        need_tools(self, "systemd-analyze")
        tmp = tempfile.mkdtemp(prefix="sutlab-infra-sd-")
        self.addCleanup(shutil.rmtree, tmp, True)
        units = ["sutlab.service", "sutlab@.service", "sutlab-migrate.service"]
        for name in units + ["sutlab.env"]:
            with open(os.path.join(DEPLOY, "systemd", name)) as f:
                text = f.read()
            if name.endswith(".service"):
                for key in ("EnvironmentFile=/etc/sutlab/sutlab.env", "DynamicUser=yes", "ProtectSystem=strict",
                            "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectHome=yes", "CapabilityBoundingSet=\n",
                            "SystemCallFilter=@system-service"):
                    self.assertIn(key, text, "%s lacks %s" % (name, key.strip()))
                self.assertIn("ExecStart=/usr/local/bin/sutlab ", text)
            # verify needs the binary where ExecStart says: point it at the one under test
            text = text.replace("/usr/local/bin/sutlab", sutlab_bin()).replace("/etc/sutlab/", tmp + "/")
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        with open(os.path.join(DEPLOY, "systemd", "sutlab.env")) as f:
            env_keys = [line.split("=", 1)[0].lstrip("# ").strip() for line in f
                        if re.match(r"^#? ?SUTLAB_[A-Z_]+=", line)]
        help_text = subprocess.run([sutlab_bin(), "serve", "--help"], stdout=subprocess.PIPE, text=True).stdout
        for k in env_keys:
            flag = "--" + k[len("SUTLAB_"):].lower().replace("_", "-")
            self.assertTrue(flag in help_text or k == "SUTLAB_MIGRATIONS_DIR", "%s is no serve flag" % k)
        instances = [os.path.join(tmp, u.replace("@.", "@8081.")) for u in units]
        shutil.copy(os.path.join(tmp, "sutlab@.service"), instances[1])
        proc = subprocess.run(["systemd-analyze", "verify", "--man=no"] + instances, cwd=tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        problems = [line for line in proc.stdout.splitlines() if "sutlab" in line]
        self.assertEqual((proc.returncode, problems), (0, []), proc.stdout)
        for unit in instances:
            proc = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--threshold=25", unit],
                                  cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stdout[-2000:])
            self.assertRegex(proc.stdout, r"Overall exposure level for \S+: [0-2]\.\d OK")

    # -- container image definition

    def test_dockerfile(self):
        joined = dockerfile_instructions(os.path.join(DEPLOY, "container", "Dockerfile"))
        stages = [i for i, line in enumerate(joined) if line.startswith("FROM ")]
        self.assertEqual(len(stages), 2, joined)
        self.assertIn("ARG DEBIAN_RELEASE=bookworm", joined)
        self.assertEqual(joined[stages[0]], "FROM debian:${DEBIAN_RELEASE} AS build")
        self.assertEqual(joined[stages[1]], "FROM debian:${DEBIAN_RELEASE}-slim AS runtime")
        build, runtime = joined[stages[0]:stages[1]], joined[stages[1]:]
        self.check_build_stage(build)
        self.check_runtime_packages(runtime)
        self.assertIn("COPY --from=build /out/ /", runtime)
        user = [line for line in runtime if line.startswith("USER ")]
        self.assertEqual(len(user), 1)
        self.assertNotIn(user[0].split()[1].split(":")[0], ("0", "root"))
        self.assertIn('ENTRYPOINT ["/usr/bin/sutlab"]', runtime)
        self.check_runtime_env(build, runtime)
        self.check_healthcheck(runtime)

    def check_build_stage(self, build):
        """The build stage has meson and every -dev package the lab builds with."""
        build_pkgs = apt_packages(build)
        self.assertIn("meson", build_pkgs)
        with open(os.path.join(ROOT, "infra", "lib", "common.sh")) as f:
            m = re.search(r"^LAB_PKGS=\((.*?)\)", f.read(), re.S | re.M)
        lab_dev = [p for p in m.group(1).split() if p.endswith("-dev")]
        self.assertEqual(sorted(set(lab_dev) - set(build_pkgs)), [])

    def check_runtime_packages(self, runtime):
        """The runtime stage has the package of every library the binary links directly (sanitizer
        runtimes of the ASan build and libc aside), and no -dev package."""
        runtime_pkgs = apt_packages(runtime)
        needed = re.findall(r"\(NEEDED\).*\[(.*)\]", subprocess.run(
            ["readelf", "-d", sutlab_bin()], stdout=subprocess.PIPE, text=True).stdout)
        ldd = subprocess.run(["ldd", sutlab_bin()], stdout=subprocess.PIPE, text=True).stdout
        paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", ldd, re.M))
        libc_like = ("libc6", "libgcc-s1", "libstdc++6", "libasan8", "libubsan1", "liblsan0", "libtsan2")
        for lib in needed:
            if lib not in paths:
                continue
            owner = package_owner(paths[lib])
            self.assertIsNotNone(owner, "no package owns %s" % os.path.realpath(paths[lib]))
            if owner in libc_like:
                continue
            self.assertIn(owner, runtime_pkgs, "runtime stage lacks %s (for %s)" % (owner, lib))
        self.assertFalse([p for p in runtime_pkgs if p.endswith("-dev")])

    def check_runtime_env(self, build, runtime):
        """ENV: every SUTLAB_* is a flag of sutlab serve (or the migrations dir of sutlab db migrate),
        and the docroot and migrations it names are where the build stage copies them."""
        env_line = [line for line in runtime if line.startswith("ENV ")][0]
        env = dict(re.findall(r"(SUTLAB_[A-Z_]+)=(\S+)", env_line))
        self.assertEqual(env["SUTLAB_LISTEN"], "0.0.0.0:8080")
        help_text = subprocess.run([sutlab_bin(), "serve", "--help"], stdout=subprocess.PIPE, text=True).stdout
        for k in env:
            flag = "--" + k[len("SUTLAB_"):].lower().replace("_", "-")
            self.assertTrue(flag in help_text or k == "SUTLAB_MIGRATIONS_DIR", "%s is no serve flag" % k)
        self.assertEqual(env["SUTLAB_DOCROOT"], "/usr/share/sutlab/static")
        self.assertIn("cp -r fixtures/static /out/usr/share/sutlab/static", " ".join(build))
        self.assertIn("cp -r db/migrations /out/usr/share/sutlab/migrations", " ".join(build))

    def check_healthcheck(self, runtime):
        """The HEALTHCHECK command, run for real against a server on SUTLAB_LISTEN, then a closed port."""
        hc = [line for line in runtime if line.startswith("HEALTHCHECK ")]
        self.assertEqual(len(hc), 1)
        cmd = json.loads(hc[0][hc[0].index("CMD ") + 4:])
        self.assertEqual(cmd[:2], ["bash", "-c"])
        with Server() as srv:
            listen = "127.0.0.1:%d,127.0.0.1:1" % srv.port
            proc = subprocess.run(cmd, env={"SUTLAB_LISTEN": listen, "PATH": "/usr/bin:/bin"}, timeout=10)
            self.assertEqual(proc.returncode, 0)
            srv.finish()
        dead = free_port()
        proc = subprocess.run(cmd, env={"SUTLAB_LISTEN": "0.0.0.0:%d" % dead, "PATH": "/usr/bin:/bin"},
                              stderr=subprocess.DEVNULL, timeout=10)
        self.assertNotEqual(proc.returncode, 0)


def dockerfile_instructions(path):
    """The Dockerfile's instructions, continuation lines joined, comments and blank lines left out."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f]
    joined, cur = [], ""
    for line in lines:
        if line.lstrip().startswith("#") and not cur:
            continue
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            if cur.strip():
                joined.append(cur.strip())
            cur = ""
    return joined


def apt_packages(stage):
    """The packages a stage's `apt-get install` lines install."""
    pkgs = []
    for line in stage:
        m = re.search(r"apt-get install -y --no-install-recommends (.*?)(&&|$)", line)
        if m:
            pkgs += m.group(1).split()
    return pkgs


def package_owner(path):
    """The Debian package that owns a library (under its real path, its /lib/ twin or the path
    ldd gave), or None."""
    real = os.path.realpath(path)
    for candidate in (real, real.replace("/usr/lib/", "/lib/", 1), path):
        proc = subprocess.run(["dpkg", "-S", candidate], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":")[0]
    return None

if __name__ == "__main__":
    unittest.main()
