"""HAProxy as the system under test (loadscripts/case haproxy): one HAProxy process on a core of
its own, sutlab behind it and the load tools on the other core, and what HAProxy's sizing table
measures, taken from HAProxy's side:

  rate(row, seconds)   one row of the rate table (ROWS: how each is loaded), with how busy
                       HAProxy kept its core and its user/kernel CPU split over the run;
  memory(mode, n)      HAProxy's resident memory per connection for n idle connections held
                       open through it (MEMORY: plain, TLS on the client side, TLS on both).

Bench(out, sutlab).start() writes a self-signed RSA2048 certificate (openssl) and the
configuration, and starts sutlab (plain and TLS listeners) and HAProxy; stop() ends both.
"""

import os
import socket
import ssl
import subprocess
import threading
import time

from . import engine, loadargv, parsers
from .report import fmt, ratio, table
from .errors import RunError
from .services import procs
from .services.server import ServerProcess

HAPROXY = "/usr/sbin/haproxy"
PATH = "/health_check"  # a 2-byte body: the write-up's rates are for small objects (002 L23)
CLOSE = ["-H", "Connection: close"]
# row: (frontend, wrk's extra arguments); wrk holds 64 connections. With `Connection: close` over
# TLS wrk offers its session back on every new connection (SSL_clear keeps it): resumed on the
# `tls` frontend (tickets), a full handshake on `tls-full` (no tickets, and no session cache at all)
ROWS = {"tcp": ("tcp", CLOSE), "close": ("close", CLOSE), "server-close": ("server-close", []),
        "keep-alive": ("keep-alive", []), "tls-keep-alive": ("tls", []), "tls-resumed": ("tls", CLOSE),
        "tls-full": ("tls-full", CLOSE)}
MEMORY = {"plain": "mem-plain", "tls-client": "mem-tls-client", "tls-both": "mem-tls-both"}
WRK_CONNECTIONS = 64
FRONTENDS = (  # name, mode, TLS on the bind, the frontend's own line, backend
    ("keep-alive", "http", False, "", "web"),
    ("server-close", "http", False, "option http-server-close", "web"),
    ("close", "http", False, "option httpclose", "web"),
    ("tcp", "tcp", False, "", "web-tcp"),
    ("tls", "http", True, "", "web"),
    ("tls-full", "http", True, "", "web"),
    ("mem-plain", "tcp", False, "", "web-tcp"),
    ("mem-tls-client", "tcp", True, "", "web-tcp"),
    ("mem-tls-both", "tcp", True, "", "web-tls"))


def config(ports, cert, web, web_tls, stats):
    """HAProxy's configuration: one thread, a frontend per row on ports[name], TLS 1.2 at most
    (the write-up's OpenSSL 1.0.2, 002 L29), sessions resumed by tickets only (no cache: the
    tls-full frontend, without tickets, can resume nothing), sutlab's plain and TLS listeners as
    backends, and the stats socket `stats` (its SSL counters say which handshakes were resumed)."""
    out = ["global", "  nbthread 1", "  maxconn 5000", "  tune.ssl.cachesize 0", "  stats socket %s" % stats,
           "defaults", "  mode http", "  timeout connect 5s",
           "  timeout client 60s", "  timeout server 60s", "  timeout http-keep-alive 60s"]
    for name, mode, tls, line, backend in FRONTENDS:
        bind = "  bind 127.0.0.1:%d" % ports[name] + (" ssl crt %s ssl-max-ver TLSv1.2" % cert if tls else "") + (
            " no-tls-tickets" if name == "tls-full" else "")
        out += ["frontend %s" % name, "  mode %s" % mode, bind] + (["  " + line] if line else []) + [
            "  default_backend %s" % backend]
    out += ["backend web", "  server s1 127.0.0.1:%d" % web, "backend web-tcp", "  mode tcp",
            "  server s1 127.0.0.1:%d" % web, "backend web-tls", "  mode tcp",
            "  server s1 127.0.0.1:%d ssl verify none" % web_tls]
    return "\n".join(out) + "\n"


class Bench:
    def __init__(self, out, sutlab, proxy_core=0, load_core=1, log=None):
        self.out, self.sutlab, self.log = out, sutlab, log or (lambda line: None)
        self.proxy_core, self.load_core = proxy_core, load_core
        self.ports = {name: procs.free_port() for name, *_ in FRONTENDS}
        self.web, self.web_tls = procs.free_port(), procs.free_port()
        self.cert, self.cfg = os.path.join(out, "cert.pem"), os.path.join(out, "haproxy.cfg")
        self.stats = os.path.join(out, "stats.sock")
        self.backend = self.proxy = None

    def start(self):
        key = os.path.join(self.out, "key.pem")
        self._run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                   "-keyout", key, "-out", self.cert + ".crt"])
        with open(self.cert, "w") as f:
            f.write(open(self.cert + ".crt").read() + open(key).read())
        with open(self.cfg, "w") as f:
            f.write(config(self.ports, self.cert, self.web, self.web_tls, self.stats))
        # no database: /health_check answers without one, and the lab's PostgreSQL is not needed
        self.backend = self._serve("sutlab", ["taskset", "-c", str(self.load_core), self.sutlab, "serve", "--listen",
                                              "127.0.0.1:%d" % self.web, "--tls-listen", "127.0.0.1:%d" % self.web_tls,
                                              "--tls-cert", self.cert + ".crt", "--tls-key", key, "--workers", "2",
                                              "--keepalive-timeout", "60", "--db-url", "postgresql://127.0.0.1:1/none"],
                                   self.web)
        self.restart_proxy()
        return self

    def restart_proxy(self):
        """A fresh HAProxy (the memory rows each start from one: its pools keep what it freed)."""
        if self.proxy is not None:
            self.proxy.stop()
        self.proxy = self._serve("haproxy", ["taskset", "-c", str(self.proxy_core), HAPROXY, "-db", "-f", self.cfg],
                                 self.ports["keep-alive"])

    def stop(self):
        for s in (self.proxy, self.backend):
            if s is not None:
                s.stop()

    def rates(self, seconds, rounds=2):
        """Every row of ROWS, in order and then in reverse (a drift of the shared machine weighs
        on both ends alike); per row the mean of each figure, but the lowest `busy` (every run of
        it must have kept HAProxy's core busy)."""
        arms = [engine.Arm(row, lambda s, row=row: self.rate(row, s)) for row in ROWS]
        return {row: combine(rs) for row, rs in engine.run_rounds(arms, rounds, seconds).items()}

    def rate(self, row, seconds):
        """{rps, errors, busy (HAProxy's core, run + runnable time over the wall), on_core (its
        run time alone: rps / on_core is its rate per CPU-second, whatever it shared), kernel (its
        share of HAProxy's CPU), load_core (the other core's use by every task, 0..1: sutlab,
        the tool and the machine's other jobs), resumed (TLS rows: the share of handshakes HAProxy
        resumed in the run's last second, its SslFrontendSessionReuse_pct)}."""
        frontend, extra = ROWS[row]
        pid = self.proxy.pid
        info = {}
        # the reuse share HAProxy counts over the last second, read in the run's last second
        timer = threading.Timer(max(0.5, seconds - 1), self._sample, (info,))
        (run0, wait0), cpu0, t0 = procs.schedstat(pid), procs.cpu_split(pid), time.monotonic()
        load0 = sum(procs.cpu_stat(self.load_core)[:2])
        timer.start()
        res = self._wrk(frontend, extra, seconds)
        timer.join()
        (run1, wait1), cpu1, wall = procs.schedstat(pid), procs.cpu_split(pid), time.monotonic() - t0
        user, kernel = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
        reuse = info.get("SslFrontendSessionReuse_pct") if frontend.startswith("tls") and extra else None
        res.update(resumed=None if reuse is None else float(reuse) / 100,
                   busy=(run1 - run0 + wait1 - wait0) / wall, on_core=(run1 - run0) / wall,
                   load_core=(sum(procs.cpu_stat(self.load_core)[:2]) - load0) / (wall * procs.CLK_TCK),
                   kernel=kernel / float(user + kernel) if user + kernel else None)
        self.log("%s: %s" % (row, res))
        return res

    def memory(self, mode, n, warm=50):
        """HAProxy's RSS growth per connection while n more idle connections (after `warm` held
        ones) go through the frontend MEMORY[mode] (TCP mode: each holds a server connection too),
        and the sockets HAProxy holds per connection (2: both sides open)."""
        self.restart_proxy()
        pid, port, tls = self.proxy.pid, self.ports[MEMORY[mode]], mode != "plain"
        mask = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {self.load_core})
        held = []
        try:
            held += [_connect(port, tls) for _ in range(warm)]
            time.sleep(1)
            rss0, fds0 = procs.rss_bytes(pid), procs.open_fds(pid)
            held += [_connect(port, tls) for _ in range(n)]
            time.sleep(1)
            rss1, fds1 = procs.rss_bytes(pid), procs.open_fds(pid)
        finally:
            for s in held:
                s.close()
            os.sched_setaffinity(0, mask)
        res = {"bytes": (rss1 - rss0) / float(n), "sockets": (fds1 - fds0) / float(n)}
        self.log("memory %s: %s" % (mode, res))
        return res

    def show_info(self):
        """HAProxy's `show info` as {name: value} (strings), from its stats socket."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.stats)
            s.sendall(b"show info\n")
            data = b"".join(iter(lambda: s.recv(65536), b""))
        return dict(line.split(": ", 1) for line in data.decode("utf-8", "replace").splitlines() if ": " in line)

    def _sample(self, info):
        try:
            info.update(self.show_info())
        except OSError as e:
            self.log("show info: %s" % e)

    def _wrk(self, frontend, extra, seconds):
        scheme = "https" if frontend.startswith("tls") else "http"
        url = "%s://127.0.0.1:%d%s" % (scheme, self.ports[frontend], PATH)
        out = self._run(loadargv.taskset(self.load_core, loadargv.wrk(url, WRK_CONNECTIONS, seconds, options=extra)))
        res = parsers.parse_wrk(out)
        return {"rps": res["rps"], "errors": res["errors"]}

    def _serve(self, name, argv, port):
        # clean_env: the case's SUTLAB_BIN would reach sutlab as a flag
        return ServerProcess(argv, port, os.path.join(self.out, "%s.log" % name), name=name, env=procs.clean_env(),
                             die_with_parent=True).start()

    def _run(self, argv):
        self.log("$ " + " ".join(argv))
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                           preexec_fn=procs.die_with_parent)
        if p.returncode != 0:
            raise RunError("%s failed (exit %d): %s" % (argv[0], p.returncode, p.stdout.decode()[-500:]))
        return p.stdout.decode("utf-8", "replace")


def combine(runs):
    """One row from its runs: the mean of each figure, the lowest busy; None stays missing."""
    out = {}
    for key in runs[0]:
        vals = [r[key] for r in runs if r.get(key) is not None]
        out[key] = None if not vals else min(vals) if key == "busy" else sum(vals) / len(vals)
    return out


def _connect(port, tls):
    """An idle connection to 127.0.0.1:port, its TLS handshake done when `tls`."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if not tls:
        return s
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    return ctx.wrap_socket(s)


def rate_table(rates, figures):
    """The rate rows beside the write-up's figures ({row: (figure, cite)}): absolute, not compared."""
    rows = [[row, "{:,}".format(figures[row][0]), figures[row][1], fmt(r.get("rps"), 0), fmt(_pct(r.get("busy")), 0),
             fmt(_pct(r.get("on_core")), 0), fmt(ratio(r.get("rps"), r.get("on_core")), 0),
             fmt(_pct(r.get("load_core")), 0), fmt(_pct(r.get("kernel")), 0), fmt(_pct(r.get("resumed")), 0)]
            for row, r in rates.items()]
    return table(["row", "write-up /s", "line", "measured /s", "HAProxy busy %", "on its core %",
                  "/s per CPU-second", "other core busy %", "kernel % of HAProxy CPU", "resumed %"], rows,
                 framed=True)


def memory_table(memory, per_gb):
    """The memory rows beside the write-up's connections per GB ({mode: (figure, cite)})."""
    rows = [[mode, "{:,}".format(per_gb[mode][0]), per_gb[mode][1], fmt(1e9 / per_gb[mode][0], 0),
             fmt(m.get("bytes"), 0), fmt(1e9 / m["bytes"] if m.get("bytes") else None, 0), fmt(m.get("sockets"), 1)]
            for mode, m in memory.items()]
    return table(["connections", "write-up per GB", "line", "write-up bytes each (GB = 10^9)", "measured bytes each",
                  "measured per GB", "HAProxy sockets each"], rows, framed=True)


def _pct(v):
    return None if v is None else 100 * v
