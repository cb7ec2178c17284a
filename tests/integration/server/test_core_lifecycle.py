#!/usr/bin/python3
"""Integration tests: sutlab's command line, environment fallbacks, logs, extra listeners,
concurrency and graceful stop (SIGTERM/SIGINT).
"""

import collections
import gzip
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import unittest
import uuid

import sutlab_testlib
from sutlab_testlib import (
    IncompleteResponse, MalformedResponse, NoResponse, RawConn, Server, build_request, free_port,
    assert_usage_error, header_tokens, port_is_free, run_cli,
)


def build_flags(srv, port=None):
    samples = srv.metrics(port=port).samples("sutlab_build_info")
    assert len(samples) == 1, samples
    flags = {}
    for item in samples[0][0]["flags"].split():
        m = re.match(r"^--([a-z0-9][a-z0-9-]*)=(.*)$", item)
        assert m, "bad flags item %r" % item
        flags.setdefault(m.group(1), m.group(2))
    return flags


class CommandLine(unittest.TestCase):
    def test_version(self):
        rc, out, err = run_cli(["--version"])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"^sutlab (0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                              r"(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?\n?$")

    def test_serve_help_lists_every_flag_with_default(self):
        rc, out, err = run_cli(["serve", "--help"])
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        defaults = {
            "listen": r"0\.0\.0\.0:8080",
            "workers": r"(?i)(cpu|\b%d\b)" % (os.cpu_count() or 1),
            "docroot": r"static",
            "db-url": r"postgresql:///sutlab",
            "db-conns": r"\b2\b",
            "redis-url": r"redis://127\.0\.0\.1:6379",
            "metrics-listen": r"(?i)\boff\b",
            "keepalive-timeout": r"\b10\b",
            "backlog": r"\b1024\b",
            "gzip": r"(?i)\boff\b",
            "log": r"(?i)\boff\b",
            "log-file": r"(?i)stdout",
            "drain-timeout": r"\b5\b",
        }
        for flag, default_re in defaults.items():
            with self.subTest(flag=flag):
                pat = re.compile(r"--(\[no-\])?%s(?![a-z-])" % re.escape(flag))
                hits = [i for i, line in enumerate(lines) if pat.search(line)]
                self.assertTrue(hits, "--%s not in serve --help:\n%s" % (flag, out))
                segments = []
                for idx in hits:  # the flag's own entry: its line and continuation lines
                    segment = [lines[idx]]
                    for line in lines[idx + 1:]:
                        if line.lstrip().startswith("-") or not line.strip():
                            break
                        segment.append(line)
                    segments.append("\n".join(segment))
                self.assertTrue(any(re.search(default_re, text) for text in segments),
                                "--%s: default not shown in %r" % (flag, segments))

    def bad(self, args, flag_word, env=None):
        port = free_port()
        full = ["serve"] + (["--listen", "127.0.0.1:%d" % port] if "--listen" not in args else []) + list(args)
        msg = assert_usage_error(self, full, env=env, timeout=5)
        self.assertIn(flag_word.lower(), msg.lower(), "%r: message does not name the flag: %r" % (args, msg))

    def test_bad_flags_exit_2(self):
        cases = [
            (["--workers", "0"], "workers"),
            (["--workers", "abc"], "workers"),
            (["--workers", "257"], "workers"),
            (["--workers", "-3"], "workers"),
            (["--workers", "2x"], "workers"),
            (["--workers"], "workers"),
            (["--keepalive-timeout", "-1"], "keepalive-timeout"),
            (["--keepalive-timeout", "3601"], "keepalive-timeout"),
            (["--keepalive-timeout", "ten"], "keepalive-timeout"),
            (["--log", "loud"], "log"),
            (["--bogus"], "bogus"),
            (["--bogus", "1"], "bogus"),
            (["--listen", "nohostport"], "listen"),
            (["--listen", "127.0.0.1:99999"], "listen"),
            (["--listen", "127.0.0.1:"], "listen"),
            (["--backlog", "abc"], "backlog"),
            (["--drain-timeout", "soon"], "drain-timeout"),
            (["--db-conns", "x"], "db-conns"),
            (["--metrics-listen", "nope"], "metrics-listen"),
        ]
        for args, word in cases:
            with self.subTest(args=args):
                self.bad(args, word)

    def test_bad_env_exit_2(self):
        cases = [
            ({"SUTLAB_WORKERS": "abc"}, "workers"),
            ({"SUTLAB_WORKERS": "0"}, "workers"),
            ({"SUTLAB_KEEPALIVE_TIMEOUT": "-1"}, "keepalive"),
            ({"SUTLAB_LOG": "loud"}, "log"),
            ({"SUTLAB_GZIP": "maybe"}, "gzip"),
        ]
        for env, word in cases:
            with self.subTest(env=env):
                self.bad([], word, env=env)

    def test_env_workers_and_flag_precedence(self):
        with Server(workers=None, env={"SUTLAB_WORKERS": "3"}) as srv:
            self.assertEqual(build_flags(srv).get("workers"), "3")
        with Server(workers=1, env={"SUTLAB_WORKERS": "3"}) as srv:
            self.assertEqual(build_flags(srv).get("workers"), "1")

    def test_env_gzip_and_no_gzip_flag(self):
        with Server(env={"SUTLAB_GZIP": "1"}) as srv:
            self.assertEqual(build_flags(srv).get("gzip"), "on")
            status, headers, body = srv.get("/metrics", headers={"Accept-Encoding": "gzip"})
            self.assertEqual(headers.get("content-encoding"), "gzip")
            self.assertIn(b"http_requests_total", gzip.decompress(body))
        with Server(env={"SUTLAB_GZIP": "1"}, extra_args=["--no-gzip"]) as srv:
            self.assertEqual(build_flags(srv).get("gzip"), "off")
            status, headers, body = srv.get("/metrics", headers={"Accept-Encoding": "gzip"})
            self.assertNotIn("content-encoding", headers)

    def test_env_keepalive_timeout_and_listen(self):
        port = free_port()
        env = {"SUTLAB_LISTEN": "127.0.0.1:%d" % port, "SUTLAB_KEEPALIVE_TIMEOUT": "0"}
        with Server(listen=False, port=port, env=env) as srv:
            flags = build_flags(srv)
            self.assertEqual(flags.get("keepalive-timeout"), "0")
            with srv.raw_conn() as conn:
                conn.send(build_request("GET", "/health_check"))
                r = conn.read_response()
                self.assertEqual(r.body, b"ok")
                self.assertIn("close", header_tokens(r.headers.get("connection")))
                self.assertIsNotNone(conn.wait_eof(3))

    def test_env_docroot(self):
        tmp = tempfile.mkdtemp(prefix="sutlab-envdoc-")
        try:
            data = b"served via SUTLAB_DOCROOT " + uuid.uuid4().hex.encode()
            with open(os.path.join(tmp, "env.txt"), "wb") as f:
                f.write(data)
            with Server(env={"SUTLAB_DOCROOT": tmp}) as srv:
                status, _, body = srv.get("/env.txt")
            self.assertEqual((status, body), (200, data))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_edge_values_accepted(self):
        with Server(extra_args=["--keepalive-timeout", "3600", "--backlog", "1"]) as srv:
            flags = build_flags(srv)
            self.assertEqual(flags.get("keepalive-timeout"), "3600")
            self.assertEqual(flags.get("backlog"), "1")
            self.assertEqual(srv.stop(), 0)


class Listeners(unittest.TestCase):
    def test_metrics_listen(self):
        p2 = free_port()
        with Server(extra_args=["--metrics-listen", "127.0.0.1:%d" % p2]) as srv:
            for _ in range(3):
                srv.get("/health_check")
            status, headers, body = srv.get("/metrics", port=p2)
            self.assertEqual(status, 200)
            self.assertTrue(headers.get("content-type", "").startswith("text/plain"))
            # the metrics host serves the instrument route alone: an app route is not found there
            self.assertEqual(srv.get("/health_check", port=p2)[0], 404)
            m = srv.metrics(port=p2)
            self.assertGreaterEqual(m.value("http_requests_total", route="/health_check", method="GET", code="200"), 3)
            self.assertEqual(srv.stop(), 0)
        self.assertTrue(port_is_free(p2), "metrics port still bound after exit")

    def test_a_port_taken_before_the_server_binds_it_is_replaced(self):
        """The harness's own port choice, taken by another process in the meantime: the server
        starts on another; a port the test gave stays an error."""
        taken = socket.socket()
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        picks = iter([busy, free_port()])
        real = sutlab_testlib.free_port
        sutlab_testlib.free_port = lambda: next(picks)
        try:
            with Server() as srv:
                self.assertNotEqual(srv.port, busy)
                self.assertIn("127.0.0.1:%d" % srv.port, srv.argv)
                self.assertEqual(srv.get("/health_check")[0], 200)
            with self.assertRaisesRegex(Exception, "Address already in use"):
                with Server(port=busy):
                    pass
        finally:
            sutlab_testlib.free_port = real
            taken.close()

    def test_two_listen_flags(self):
        p2 = free_port()
        with Server(extra_args=["--listen", "127.0.0.1:%d" % p2]) as srv:
            self.assertEqual(srv.get("/health_check")[2], b"ok")
            self.assertEqual(srv.get("/health_check", port=p2)[2], b"ok")

    def test_two_workers_serve_concurrent_clients(self):
        with Server(workers=2) as srv:
            # many idle connections must not starve anyone
            idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(40)]
            errors, done = [], collections.Counter()

            def client():
                try:
                    with srv.raw_conn() as conn:
                        for _ in range(25):
                            conn.send(build_request("GET", "/health_check"))
                            r = conn.read_response()
                            if (r.status, r.body) != (200, b"ok"):
                                errors.append(r)
                            done["ok"] += 1
                except Exception as e:  # noqa: BLE001
                    errors.append(repr(e))

            threads = [threading.Thread(target=client) for _ in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            for s in idle:
                s.close()
            self.assertEqual(errors, [])
            self.assertEqual(done["ok"], 16 * 25)


class Logs(unittest.TestCase):
    def test_access_log_one_line_per_request(self):
        token = uuid.uuid4().hex
        tmp = tempfile.mkdtemp(prefix="sutlab-log-")
        log = os.path.join(tmp, "access.log")
        docroot = os.path.join(tmp, "docroot")
        os.makedirs(docroot)
        with open(os.path.join(docroot, "file-%s.txt" % token), "w") as f:
            f.write("logged\n")
        try:
            with Server(docroot=docroot, extra_args=["--log", "access", "--log-file", log]) as srv:
                ours = [
                    ("GET", "/health_check", None, 200),
                    ("GET", "/file-%s.txt" % token, None, 200),
                    ("GET", "/nope-%s" % token, None, 404),
                    ("POST", "/health_check", b'{"a":1}', 405),
                    ("GET", "/also-missing-%s" % token, None, 404),
                ]
                for method, path, body, code in ours:
                    self.assertEqual(srv.request(method, path, body=body)[0], code, path)
                health = srv.ready_requests + 2
                self.assertEqual(srv.stop(), 0)
            with open(log, encoding="utf-8", errors="replace") as f:
                lines = [line for line in f.read().splitlines() if line.strip()]
            self.assertEqual(len([l for l in lines if "/health_check" in l]), health, "\n".join(lines))
            for method, path, _, code in ours:
                if path == "/health_check":
                    continue  # counted above and below
                matching = [l for l in lines if path in l]
                with self.subTest(path=path):
                    self.assertEqual(len(matching), 1, "lines for %s:\n%s" % (path, "\n".join(lines)))
                    self.assertIn(method, matching[0])
                    self.assertRegex(matching[0], r"\b%d\b" % code)
            post = [l for l in lines if "/health_check" in l and "POST" in l]
            self.assertEqual(len(post), 1)
            self.assertRegex(post[0], r"\b405\b")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_access_log_to_stdout_by_default(self):
        token = uuid.uuid4().hex
        with Server(extra_args=["--log", "access"]) as srv:
            self.assertEqual(srv.get("/nope-%s" % token)[0], 404)
            self.assertEqual(srv.stop(), 0)
            out = srv.stdout()
        self.assertEqual(len([l for l in out.splitlines() if token in l]), 1, out)

    def test_verbose_log_has_request_bodies(self):
        token = uuid.uuid4().hex
        tmp = tempfile.mkdtemp(prefix="sutlab-vlog-")
        log = os.path.join(tmp, "verbose.log")
        try:
            with Server(extra_args=["--log", "verbose", "--log-file", log]) as srv:
                body = ('{"probe":"%s"}' % token).encode()
                status, _, _ = srv.request("POST", "/verbose-nope", body=body,
                                           headers={"Content-Type": "application/json"})
                self.assertEqual(status, 404)
                # written synchronously: visible without stopping the server
                deadline = time.monotonic() + 1.0
                while token not in _read(log) and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertIn(token, _read(log), "request body not in the verbose log while running")
                self.assertEqual(srv.stop(), 0)
            text = _read(log)
            # the body may be escaped to keep one entry per line (e.g. " as \x22, nginx style)
            unescaped = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)
            unescaped = unescaped.replace('\\"', '"')
            self.assertIn('{"probe":"%s"}' % token, unescaped, text)
            self.assertIn("/verbose-nope", text)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_log_off_writes_no_request_lines(self):
        token = uuid.uuid4().hex
        tmp = tempfile.mkdtemp(prefix="sutlab-nolog-")
        log = os.path.join(tmp, "off.log")
        try:
            with Server(extra_args=["--log", "off", "--log-file", log]) as srv:
                self.assertEqual(srv.get("/nope-%s" % token)[0], 404)
                self.assertEqual(srv.stop(), 0)
                self.assertNotIn(token, _read(log))
                self.assertNotIn(token, srv.stdout())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class GracefulStop(unittest.TestCase):
    def timed_stop(self, srv, sig=signal.SIGTERM, timeout=15):
        t0 = time.monotonic()
        rc = srv.stop(sig, timeout=timeout)
        return rc, time.monotonic() - t0

    def test_sigterm_exit_0_and_port_freed(self):
        with Server() as srv:
            self.assertEqual(srv.get("/health_check")[2], b"ok")
            rc, took = self.timed_stop(srv)
            self.assertEqual(rc, 0, srv.stderr())
            self.assertLessEqual(took, 7.0)
            self.assertTrue(port_is_free(srv.port), "port still bound after exit")

    def test_sigint_exit_0(self):
        with Server(workers=2) as srv:
            self.assertEqual(srv.get("/health_check")[2], b"ok")
            rc, took = self.timed_stop(srv, signal.SIGINT)
            self.assertEqual(rc, 0, srv.stderr())
            self.assertLessEqual(took, 7.0)
            self.assertTrue(port_is_free(srv.port))

    def test_sigterm_with_idle_keepalive_connection_default_drain(self):
        with Server() as srv:
            conn = srv.raw_conn(timeout=15)
            with conn:
                conn.send(build_request("GET", "/health_check"))
                self.assertEqual(conn.read_response().body, b"ok")
                rc, took = self.timed_stop(srv)
                self.assertEqual(rc, 0, srv.stderr())
                self.assertLessEqual(took, 5 + 2.0, "exit took %.1f s with the default 5 s drain" % took)
                self.assertIsNotNone(conn.wait_eof(2), "held connection still open after exit")
            self.assertTrue(port_is_free(srv.port))

    def test_drain_deadline_with_stuck_connections(self):
        # a half-sent request and a half-sent body never finish: the drain deadline must end the wait
        with Server(extra_args=["--drain-timeout", "1"]) as srv:
            a = srv.raw_conn(timeout=10)
            b = srv.raw_conn(timeout=10)
            c = srv.raw_conn(timeout=10)
            try:
                a.send(b"GET /health_check HTTP/1.1\r\nHost: x\r\n")
                b.send(build_request("POST", "/rpc/echo", headers=[("Content-Length", "100")]) + b"0123456789")
                c.send(build_request("GET", "/health_check"))
                self.assertEqual(c.read_response().body, b"ok")  # c is now idle
                time.sleep(0.2)
                rc, took = self.timed_stop(srv)
                self.assertEqual(rc, 0, srv.stderr())
                self.assertLessEqual(took, 1 + 2.0, "exit took %.1f s with --drain-timeout 1" % took)
            finally:
                for x in (a, b, c):
                    x.close()
            self.assertTrue(port_is_free(srv.port))

    def test_drain_deadline_holds_when_an_inline_handler_blocks_the_loop(self):
        # Inline, each queued /work/sleep holds the worker's loop for its whole time, so the
        # worker cannot see its own deadline: 16 of them would take 8 s. The main thread gives
        # up on it at --drain-timeout plus its 1 s margin, and says so.
        with Server(workers=1, extra_args=["--drain-timeout", "1", "--handler-mode", "inline"]) as srv:
            conns = [srv.raw_conn(timeout=15) for _ in range(16)]
            try:
                for c in conns:
                    c.send(build_request("GET", "/work/sleep?ms=500"))
                time.sleep(0.3)
                rc, took = self.timed_stop(srv)
            finally:
                for c in conns:
                    c.close()
            self.assertEqual(rc, 0, srv.stderr())
            self.assertLessEqual(took, 1 + 1 + 0.5 + 1.0, "exit took %.1f s with --drain-timeout 1" % took)
            self.assertIn("1 worker still blocked 2 s after the stop", srv.stderr())
            self.assertTrue(port_is_free(srv.port))

    def test_inflight_upload_completes_after_sigterm(self):
        # a request whose headers and half of its body have arrived is in flight: SIGTERM must let
        # it finish (the client sends the rest well within the drain timeout) and answer it
        with Server(extra_args=["--drain-timeout", "5"]) as srv:
            with srv.raw_conn(timeout=8) as conn:
                body = b'{"upload":"0123456789abcdef"}'
                conn.send(build_request("POST", "/upload-nope", body=body[:10],
                                        headers=[("Content-Type", "application/json"),
                                                 ("Content-Length", str(len(body)))]))
                time.sleep(0.3)
                t0 = time.monotonic()
                srv.proc.send_signal(signal.SIGTERM)
                time.sleep(0.5)
                try:
                    conn.send(body[10:])
                    r = conn.read_response()
                except (NoResponse, IncompleteResponse, OSError) as e:
                    self.fail("in-flight request (body half sent at SIGTERM, rest sent 0.5 s later) "
                              "was dropped: %r" % e)
                self.assertEqual(r.status, 404, r)  # an unknown route: the whole request was read
                self.assertIn("close", header_tokens(r.headers.get("connection")),
                              "a response during drain should say Connection: close")
            rc = srv.stop(timeout=10)
            self.assertEqual(rc, 0, srv.stderr())
            self.assertLessEqual(time.monotonic() - t0, 5 + 2.0)

    def test_sigterm_under_load(self):
        """Keep-alive clients hammer the server; SIGTERM in the middle.

        Allowed: refused connections (after SIGTERM), and a connection closed (EOF or reset) before
        any byte of a response arrived -- on a reused keep-alive connection at any time after
        SIGTERM, or on a fresh connection the server never accepted after SIGTERM.
        Failures: a response cut mid-way, a malformed response, a non-200 or wrong body, a
        timeout, a refused/closed connection before SIGTERM, a non-zero exit, a late exit.
        """
        drain = 3
        with Server(workers=2, extra_args=["--drain-timeout", str(drain)]) as srv:
            port = srv.port
            clients = SigtermClients(port, 6)
            clients.start()
            time.sleep(1.0)
            t0 = time.monotonic()
            clients.sigterm.set()
            srv.proc.send_signal(signal.SIGTERM)
            try:
                rc = srv.proc.wait(timeout=drain + 2)
            except Exception:  # noqa: BLE001
                rc = None
            took = time.monotonic() - t0
            time.sleep(0.3)  # clients observe the closed port
            clients.stop()
            summary = dict(clients.stats)
            self.assertEqual(clients.failures[:10], [], "%d failures; stats %r" % (len(clients.failures), summary))
            self.assertIsNotNone(rc, "server still running %d s after SIGTERM; stats %r" % (drain + 2, summary))
            self.assertEqual(rc, 0, srv.stderr())
            # under load: requests were answered before the signal (how many is the machine's, printed)
            self.assertGreater(clients.stats["ok-before-sigterm"], 0, summary)
            self.assertTrue(port_is_free(port), "port still bound after exit")
            print("\nunder-load stop: exit %.2f s after SIGTERM, %r" % (took, summary), file=sys.stderr)


class SigtermClients:
    """test_sigterm_under_load's clients: threads sending GET /health_check on keep-alive
    connections until stop(), each outcome counted in stats, each one not allowed at that point
    (before or after the sigterm event is set) listed in failures."""

    def __init__(self, port, count):
        self.port = port
        self.sigterm = threading.Event()
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.stats = collections.Counter()
        self.failures = []
        self.threads = [threading.Thread(target=self.client, daemon=True) for _ in range(count)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(10)

    def note(self, key):
        with self.lock:
            self.stats[key] += 1

    def fail(self, msg):
        with self.lock:
            self.failures.append(msg)

    def connect(self):
        """A new connection, or None (counted, and a failure before SIGTERM)."""
        after = self.sigterm.is_set()
        try:
            return RawConn(self.port, timeout=5)
        except ConnectionRefusedError:
            if not after:
                self.fail("connection refused before SIGTERM")
            self.note("refused")
        except OSError as e:
            if not after:
                self.fail("connect error before SIGTERM: %r" % e)
            self.note("connect-error")
        time.sleep(0.01)
        return None

    def exchange(self, conn, fresh):
        """One request on conn (fresh: its first). Returns whether conn may be used again."""
        after = self.sigterm.is_set()
        try:
            conn.send(build_request("GET", "/health_check"))
            r = conn.read_response()
        except (NoResponse, BrokenPipeError, ConnectionResetError) as e:
            how = getattr(e, "how", type(e).__name__)
            if not self.sigterm.is_set():
                self.fail("connection closed without a response before SIGTERM (%s, fresh=%s)" % (how, fresh))
            self.note("closed-before-response-%s-%s" % ("fresh" if fresh else "reused", how))
            return False
        except IncompleteResponse as e:
            self.fail("response cut mid-way: %s" % e)
            return False
        except MalformedResponse as e:
            self.fail("malformed response: %s" % e)
            return False
        except socket.timeout:
            self.fail("no response within 5 s (sigterm=%s)" % self.sigterm.is_set())
            return False
        if r.status != 200 or r.body != b"ok":
            self.fail("bad response %d %r" % (r.status, r.body[:100]))
        else:
            self.note("ok-after-sigterm" if after else "ok-before-sigterm")
        if "close" in header_tokens(r.headers.get("connection")):
            self.note("told-close")
            return False
        return True

    def client(self):
        conn, fresh = None, True
        while not self.done.is_set():
            if conn is None:
                conn, fresh = self.connect(), True
                if conn is None:
                    continue
            if self.exchange(conn, fresh):
                fresh = False
            else:
                conn.close()
                conn = None
        if conn is not None:
            conn.close()

if __name__ == "__main__":
    unittest.main()
