#!/usr/bin/python3
"""Overload: 10,000 concurrent connections and slowloris clients.

- 10,000 connections are opened and held (the test raises its RLIMIT_NOFILE; the server inherits
  it), the server accepts every one (http_connections_open), then each sends one request and
  every one gets its 200 — with the server's RSS bounded (VmRSS from /proc, printed) and its
  open file descriptors back to the baseline once they close.
- Slowloris: clients trickling their headers (or their body) a byte at a time are cut off at the
  request timeout (--keepalive-timeout 2: the whole request must arrive within it), while other
  clients keep getting answers within a second all along.

A body over 1 MiB is refused with 413 from its Content-Length, before it is read:
test_core_http.py::CoreHTTP::test_413_content_length_without_reading_body (and _chunked).
"""

import os
import resource
import selectors
import socket
import struct
import sys
import threading
import time
import unittest

from pgtest import FreshDatabase
from sutlab_testlib import Server, migrate_and_seed, open_fds, rss_bytes, start_class_server, stop_class_server

N_CONNECTIONS = int(os.environ.get("SUTLAB_TEST_CONNECTIONS", "10000"))
RSS_BOUND_MB = 500
FD_HEADROOM = 2000  # on top of N_CONNECTIONS, for the server's own fds and the test's


def log(msg):
    sys.stderr.write("[overload] %s\n" % msg)
    sys.stderr.flush()


def raise_nofile(want):
    """Raise this process's RLIMIT_NOFILE to at least `want` (the hard limit too when allowed).
    Returns the old limits, or raises SkipTest."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= want:
        return soft, hard
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, max(hard, want)))
    except (ValueError, OSError) as e:
        raise unittest.SkipTest("cannot raise RLIMIT_NOFILE to %d (soft %d, hard %d): %s" % (want, soft, hard, e))
    return soft, hard


def rss_mb(pid):
    return rss_bytes(pid) / 1048576.0


def connections_open(srv):
    return srv.metrics().total("http_connections_open")


class TenThousandConnections(unittest.TestCase):
    def setUp(self):
        self.old_limits = raise_nofile(N_CONNECTIONS + FD_HEADROOM)
        self.addCleanup(self.restore_limits)
        self.db = FreshDatabase(prefix="sutlab_overload")
        url = self.db.create()
        self.addCleanup(self.db.drop)
        migrate_and_seed(url, timeout=180)
        self.srv = Server(extra_args=["--db-url", url, "--keepalive-timeout", "120", "--backlog", "4096"], workers=2)
        self.srv.start()
        self.addCleanup(self.srv.close)
        self.socks = []
        self.addCleanup(self.close_all)

    def restore_limits(self):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.old_limits[0], resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        except (ValueError, OSError):
            pass

    def close_all(self):
        """Abortive closes (RST): 10,000 client-side TIME_WAITs would hold ephemeral ports for a
        minute, into the next tests."""
        linger = struct.pack("ii", 1, 0)
        for s in self.socks:
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                s.close()
            except OSError:
                pass
        self.socks = []

    def connect_all(self, n):
        """n non-blocking connects, in waves of 500 (a burst of 10,000 SYNs would overflow the
        listen queue and make the kernel retry, which only adds seconds)."""
        sel = selectors.DefaultSelector()
        failed = []
        for start in range(0, n, 500):
            pending = 0
            for _ in range(start, min(n, start + 500)):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                rc = s.connect_ex(("127.0.0.1", self.srv.port))
                self.socks.append(s)
                if rc == 0:
                    continue
                if rc not in (115, 11):  # EINPROGRESS, EAGAIN
                    failed.append(os.strerror(rc))
                    continue
                sel.register(s, selectors.EVENT_WRITE)
                pending += 1
            deadline = time.monotonic() + 30
            while pending and time.monotonic() < deadline:
                for key, _ in sel.select(timeout=1):
                    err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if err:
                        failed.append(os.strerror(err))
                    sel.unregister(key.fileobj)
                    pending -= 1
            self.assertEqual(pending, 0, "connects still pending after 30 s")
        sel.close()
        return failed

    def test_10000_connections_held_then_all_answered(self):
        pid = self.srv.proc.pid
        n = N_CONNECTIONS
        for _ in range(20):  # warm up: every worker allocated its buffers
            self.assertEqual(self.srv.get("/health_check")[0], 200)
        rss0, fds0 = rss_mb(pid), open_fds(pid)
        t0 = time.monotonic()
        failed = self.connect_all(n)
        self.assertEqual(failed, [], "%d of %d connects failed: %s" % (len(failed), n, sorted(set(failed))))
        self.wait_all_accepted(n)
        t_open = time.monotonic() - t0
        rss_open, fds_open = rss_mb(pid), open_fds(pid)
        self.assertGreaterEqual(fds_open, n)

        t1 = time.monotonic()
        statuses = self.request_on_each(n)
        t_answer = time.monotonic() - t1
        rss_peak = max(rss_open, rss_mb(pid))
        counts = {}
        for v in statuses.values():
            counts[v] = counts.get(v, 0) + 1
        log("%d connections: opened and accepted in %.1f s, all answered in %.1f s; statuses %r"
            % (n, t_open, t_answer, counts))
        log("server RSS %.1f MB idle, %.1f MB with %d connections open, %.1f MB after answering; fds %d -> %d"
            % (rss0, rss_open, n, rss_peak, fds0, fds_open))
        self.assertEqual(len(statuses), n, "%d of %d connections got no response within 120 s" % (n - len(statuses), n))
        self.assertEqual(counts, {200: n}, "not every connection got a 200")
        self.assertLess(rss_peak, RSS_BOUND_MB, "server RSS %.0f MB with %d connections" % (rss_peak, n))
        self.check_all_released(pid, fds0)

    def wait_all_accepted(self, n):
        """The server accepted every one (the gauge counts accepted connections, plus our scrape)."""
        deadline = time.monotonic() + 60
        while True:
            seen = connections_open(self.srv)
            if seen >= n or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.assertGreaterEqual(seen, n, "the server holds %d of %d connections" % (seen, n))

    def request_on_each(self, n):
        """One request on each held connection (every 20th needs PostgreSQL, the rest are health
        checks): {socket: status, or "closed"} of those answered (or closed) within 120 s."""
        sel = selectors.DefaultSelector()
        bufs = {}
        for i, s in enumerate(self.socks):
            path = b"/stores/1" if i % 20 == 0 else b"/health_check"
            s.send(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            bufs[s] = bytearray()
            sel.register(s, selectors.EVENT_READ)
        statuses = {}
        deadline = time.monotonic() + 120
        while len(statuses) < n and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                s = key.fileobj
                try:
                    chunk = s.recv(65536)
                except (ConnectionResetError, BlockingIOError) as e:
                    chunk = None if isinstance(e, ConnectionResetError) else b""
                if chunk is None or (chunk == b"" and not bufs[s]):
                    statuses[s] = "closed"
                    sel.unregister(s)
                    continue
                bufs[s] += chunk
                status = response_status(bufs[s])
                if status is not None:
                    statuses[s] = status
                    sel.unregister(s)
        sel.close()
        return statuses

    def check_all_released(self, pid, fds0):
        """Closing them gives every descriptor back, and the server still answers."""
        self.close_all()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (connections_open(self.srv) > 2 or open_fds(pid) > fds0 + 5):
            time.sleep(0.5)
        fds_after, rss_after = open_fds(pid), rss_mb(pid)
        log("after closing: %d fds (baseline %d), RSS %.1f MB" % (fds_after, fds0, rss_after))
        self.assertLessEqual(fds_after, fds0 + 5, "file descriptors not released")
        self.assertLessEqual(connections_open(self.srv), 2)
        self.assertEqual(self.srv.get("/health_check")[0], 200)
        self.srv.finish()


def response_status(b):
    """The status of the whole response in buffer b (head and Content-Length body), or None while
    it is incomplete."""
    head_end = b.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    head = bytes(b[:head_end]).decode("latin-1").lower()
    length = 0
    for line in head.split("\r\n")[1:]:
        if line.startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    if len(b) >= head_end + 4 + length:
        return int(head.split(" ", 2)[1])
    return None

class Slowloris(unittest.TestCase):
    TIMEOUT = 2  # --keepalive-timeout

    @classmethod
    def setUpClass(cls):
        cls.srv = start_class_server(Server(extra_args=["--keepalive-timeout", str(cls.TIMEOUT)], workers=1))

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv)

    def run_slow_clients(self, n, head, trickle, duration=6.0, interval=0.5):
        """n connections send `head` at once, then one byte of `trickle` every `interval` s.
        Meanwhile another thread times normal requests. Returns (close times, normal latencies,
        normal failures, responses the slow clients got)."""
        socks = []
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
            s.setblocking(False)
            if head:
                s.send(head)
            socks.append([s, time.monotonic(), None, b""])
        latencies, failures = [], []
        stop = threading.Event()

        def normal():
            while not stop.is_set():
                t = time.monotonic()
                try:
                    status = self.srv.request("GET", "/health_check", timeout=5)[0]
                    if status != 200:
                        failures.append(status)
                except OSError as e:
                    failures.append(repr(e))
                latencies.append(time.monotonic() - t)
                time.sleep(0.05)

        th = threading.Thread(target=normal, daemon=True)
        th.start()
        t0 = time.monotonic()
        i = 0
        try:
            while time.monotonic() - t0 < duration and any(c[2] is None for c in socks):
                for c in socks:
                    if c[2] is not None:
                        continue
                    try:
                        data = c[0].recv(4096)
                        if data == b"":
                            c[2] = time.monotonic() - c[1]
                            continue
                        c[3] += data
                    except BlockingIOError:
                        pass
                    except ConnectionResetError:
                        c[2] = time.monotonic() - c[1]
                        continue
                    try:
                        c[0].send(trickle[i % len(trickle):i % len(trickle) + 1])
                    except (BrokenPipeError, ConnectionResetError):
                        c[2] = time.monotonic() - c[1]
                i += 1
                time.sleep(interval)
        finally:
            stop.set()
            th.join(10)
            for c in socks:
                c[0].close()
        return [c[2] for c in socks], latencies, failures, [c[3] for c in socks]

    def check(self, what, closes, latencies, failures, answers):
        still_open = sum(1 for c in closes if c is None)
        worst = max(c for c in closes if c is not None) if still_open < len(closes) else None
        log("%s: %d slow clients, closed after %s s (worst), %d still open; %d normal requests meanwhile,"
            " slowest %.3f s, %d failed" % (what, len(closes), "%.2f" % worst if worst else "-", still_open,
                                              len(latencies), max(latencies) if latencies else -1, len(failures)))
        self.assertEqual(still_open, 0, "%s: %d slow clients were never cut off" % (what, still_open))
        self.assertLess(worst, self.TIMEOUT + 1.5, "%s: a slow client was held %.1f s" % (what, worst))
        self.assertEqual(failures, [], "%s: normal requests failed meanwhile" % what)
        self.assertGreater(len(latencies), 10)
        # held behind the slow clients, a request would wait for their cut (TIMEOUT s); its time is logged above
        self.assertLess(max(latencies), self.TIMEOUT, "%s: a normal request took %.2f s meanwhile"
                        % (what, max(latencies)))
        for a in answers:
            self.assertNotIn(b" 200 ", a[:20], "%s: a slow client was served" % what)

    def test_trickled_headers_are_cut_at_the_request_timeout(self):
        trickle = b"X-Slow-Header: " + b"a" * 200
        res = self.run_slow_clients(200, b"GET /health_check HTTP/1.1\r\nHost: x\r\n", trickle)
        self.check("headers at 2 bytes/s", *res)

    def test_trickled_request_line_is_cut(self):
        res = self.run_slow_clients(100, b"", b"GET /health_check HTTP/1.1\r\n" + b"X" * 100)
        self.check("request line at 2 bytes/s", *res)

    def test_trickled_body_is_cut(self):
        head = (b"POST /rpc/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 100000\r\n\r\n")
        res = self.run_slow_clients(100, head, b" " * 100)
        self.check("body at 2 bytes/s", *res)

    def test_idle_connections_after_a_request_are_cut(self):
        """Keep-alive connections that go quiet after one request (the cheap slowloris) are
        closed at the same timeout."""
        socks = []
        for _ in range(200):
            s = socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)
            s.sendall(b"GET /health_check HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append((s, time.monotonic()))
        worst = 0.0
        for s, t in socks:
            s.settimeout(self.TIMEOUT + 3)
            data = b""
            try:
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
            except socket.timeout:
                self.fail("an idle keep-alive connection is still open after %d s" % (self.TIMEOUT + 3))
            self.assertIn(b" 200 ", data[:20])
            worst = max(worst, time.monotonic() - t)
            s.close()
        log("200 idle keep-alive connections closed within %.2f s" % worst)
        self.assertLess(worst, self.TIMEOUT + 2)


if __name__ == "__main__":
    unittest.main()
