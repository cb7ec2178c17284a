"""Shared helpers for sutlab's integration tests (standard library only).

Every test talks real HTTP to the real server binary, started on a free loopback port:

    with Server(docroot=tmpdir, extra_args=["--gzip"]) as srv:
        status, headers, body = srv.get("/health_check")

Environment:
  SUTLAB_BIN          path to the sutlab binary (required)
  SUTLAB_SOURCE_ROOT  repository top (defaults to two levels above this file)

The server process, ports and environment come from the services layer of the lab's package
(loadscripts/sutlab_lab/services), the /metrics parser too (services.metrics): the server tests
take nothing else from loadscripts/. tests/meson.build puts this folder and loadscripts/ on
PYTHONPATH for every integration test (tests in server/, tooling/ and infra/ import this module and
the package from there); by hand: PYTHONPATH=tests/integration:loadscripts python3 FILE.
"""

import email.utils
import http.client
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from sutlab_lab.services.metrics import Metrics, MetricsFormatError, parse_float, parse_metrics  # noqa: F401
from sutlab_lab.services.procs import (clean_env, cpu_split, free_port, open_fds, pid_alive,  # noqa: F401
                                       port_is_free, rss_bytes)
from sutlab_lab.services.server import ServerProcess, ServerStartError  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))


def source_root():
    return os.environ.get("SUTLAB_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", ".."))


def sutlab_bin():
    path = os.environ.get("SUTLAB_BIN")
    if not path:
        guess = os.path.join(source_root(), "build", "sutlab")
        if os.path.exists(guess):
            return guess
        raise unittest.SkipTest("SUTLAB_BIN is not set")
    return path


def run_cli(args, env=None, timeout=10, cwd=None):
    """Run the binary to completion: returns (returncode, stdout str, stderr str).

    If it is still running after `timeout` (e.g. it started serving instead of rejecting a flag),
    it is killed and returncode is None.
    """
    proc = subprocess.Popen([sutlab_bin()] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=clean_env(env), cwd=cwd or tempfile.gettempdir(),
                            stdin=subprocess.DEVNULL)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def assert_usage_error(test, args, *words, env=None, timeout=10):
    """`sutlab ARGS` must refuse its command line: exit 2 (not start serving: killed after
    `timeout` s) with one line on stderr that holds each of `words`. Returns that line."""
    rc, _, err = run_cli(args, env=env, timeout=timeout)
    test.assertIsNotNone(rc, "%r (env %r): still running after %g s instead of exiting 2" % (args, env, timeout))
    test.assertEqual(rc, 2, "%r (env %r): exit %r, stderr %r" % (args, env, rc, err))
    lines = err.strip().splitlines()
    test.assertEqual(len(lines), 1, "%r: stderr is not one line: %r" % (args, err))
    for word in words:
        test.assertIn(word, lines[0], "%r: the message does not name %r" % (args, word))
    return lines[0]


# ----------------------------------------------------------------------------------------------
# Raw HTTP/1.x on a socket


class NoResponse(Exception):
    """The connection ended (EOF or reset) before a single byte of the response arrived."""

    def __init__(self, how):
        super().__init__(how)
        self.how = how  # "eof" or "reset"


class IncompleteResponse(Exception):
    """Some bytes of a response arrived, then the connection ended or timed out."""

    def __init__(self, how, data):
        super().__init__("%s after %d bytes: %r" % (how, len(data), bytes(data[:300])))
        self.how = how
        self.data = bytes(data)


class MalformedResponse(Exception):
    pass


class RawResponse:
    def __init__(self, version, status, reason, header_list, body, raw):
        self.version = version          # "HTTP/1.1"
        self.status = status            # int
        self.reason = reason
        self.header_list = header_list  # [(name lowercased, value)] in order
        self.headers = headers_dict(header_list)
        self.body = body
        self.raw = raw                  # every byte of this response as received

    def __repr__(self):
        return "<RawResponse %s %d %r body=%r>" % (self.version, self.status, self.headers, self.body[:200])


def headers_dict(header_list):
    d = {}
    for name, value in header_list:
        name = name.lower()
        d[name] = d[name] + ", " + value if name in d else value
    return d


def header_tokens(value):
    """Comma-separated header value -> set of lowercased tokens."""
    return {t.strip().lower() for t in (value or "").split(",") if t.strip()}


class RawConn:
    """A client socket that reads whole HTTP/1.x responses off a byte stream (keep-alive aware)."""

    def __init__(self, port, host="127.0.0.1", timeout=5.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.buf = bytearray()
        self.eof = False
        self.responses = 0
        self._got_any = False  # of the response being read

    def send(self, data):
        self.sock.sendall(data)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _fill(self):
        """Read more bytes into buf; returns False on EOF. Raises ConnectionResetError/timeout."""
        if self.eof:
            return False
        chunk = self.sock.recv(65536)
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def wait_eof(self, timeout):
        """Wait until the peer closes. Returns seconds waited, or None if still open at `timeout`.

        Data arriving meanwhile is kept in the buffer. A reset counts as closed.
        """
        start = time.monotonic()
        old = self.sock.gettimeout()
        try:
            while True:
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    return None
                self.sock.settimeout(left)
                try:
                    if not self._fill():
                        return time.monotonic() - start
                except socket.timeout:
                    return None
                except ConnectionResetError:
                    self.eof = True
                    return time.monotonic() - start
        finally:
            self.sock.settimeout(old)

    def read_response(self, head=False):
        """Read exactly one response. `head`: the request was HEAD (no body follows).

        Raises NoResponse if the stream ends before any byte, IncompleteResponse if it ends (or
        times out) mid-response, MalformedResponse on syntax errors.
        """
        self._got_any = len(self.buf) > 0  # normally not: the previous response was consumed exactly
        version, status, reason, hl, pos = self._read_head()
        hd = headers_dict(hl)
        if head or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in header_tokens(hd.get("transfer-encoding")):
            body, pos = self._read_chunked(pos)
        elif "content-length" in hd:
            try:
                n = int(hd["content-length"])
            except ValueError:
                raise MalformedResponse("bad content-length %r" % hd["content-length"])
            self._need(pos + n)
            body = bytes(self.buf[pos:pos + n])
            pos += n
        else:
            body, pos = self._read_to_close(pos)
        raw = bytes(self.buf[:pos])
        del self.buf[:pos]
        self.responses += 1
        return RawResponse(version, status, reason, hl, body, raw)

    def _fill_or_fail(self):
        """_fill() for a response being read: the stream ending or stalling is NoResponse before
        its first byte, IncompleteResponse after."""
        try:
            ok = self._fill()
        except ConnectionResetError:
            if not self._got_any:
                raise NoResponse("reset")
            raise IncompleteResponse("reset", self.buf)
        except socket.timeout:
            if not self._got_any:
                raise
            raise IncompleteResponse("timeout", self.buf)
        if not ok:
            if not self._got_any:
                raise NoResponse("eof")
            raise IncompleteResponse("eof", self.buf)
        self._got_any = True

    def _need(self, n):
        while len(self.buf) < n:
            self._fill_or_fail()

    def _line_end(self, pos):
        """Where the CRLF ending the line at pos is, reading until it has come."""
        while self.buf.find(b"\r\n", pos) < 0:
            self._fill_or_fail()
        return self.buf.find(b"\r\n", pos)

    def _read_head(self):
        """(version, status, reason, [(name, value)], where the body starts)."""
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buf) > 1 << 20:
                raise MalformedResponse("header section over 1 MiB")
            self._fill_or_fail()
        lines = bytes(self.buf[:end]).split(b"\r\n")
        m = re.match(rb"^(HTTP/1\.[01]) (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise MalformedResponse("bad status line %r" % lines[0])
        hl = []
        for line in lines[1:]:
            hm = re.match(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$", line)
            if not hm:
                raise MalformedResponse("bad header line %r" % line)
            hl.append((hm.group(1).decode("latin-1").lower(), hm.group(2).decode("latin-1")))
        return m.group(1).decode(), int(m.group(2)), (m.group(3) or b"").decode("latin-1"), hl, end + 4

    def _read_chunked(self, pos):
        """(the de-chunked body, where the response ends), trailers skipped."""
        body = bytearray()
        while True:
            le = self._line_end(pos)
            size_txt = bytes(self.buf[pos:le]).split(b";")[0].strip()
            try:
                size = int(size_txt, 16)
            except ValueError:
                raise MalformedResponse("bad chunk size %r" % size_txt)
            pos = le + 2
            if size == 0:
                break
            self._need(pos + size + 2)
            body += self.buf[pos:pos + size]
            if self.buf[pos + size:pos + size + 2] != b"\r\n":
                raise MalformedResponse("chunk not followed by CRLF")
            pos += size + 2
        while True:  # trailers, then an empty line
            le = self._line_end(pos)
            empty, pos = le == pos, le + 2
            if empty:
                return bytes(body), pos

    def _read_to_close(self, pos):
        """A body delimited by the end of the connection."""
        while True:
            try:
                if not self._fill():
                    break
            except ConnectionResetError:
                raise IncompleteResponse("reset", self.buf)
            except socket.timeout:
                raise IncompleteResponse("timeout", self.buf)
        return bytes(self.buf[pos:]), len(self.buf)


def migrate_and_seed(url, size="tiny", bcrypt_cost=None, timeout=300):
    """`sutlab db migrate`, then `sutlab db seed --size SIZE`, into the database at url; raises
    AssertionError with sutlab's stderr if either fails."""
    seed = ["db", "seed", "--size", size, "--db-url", url]
    if bcrypt_cost is not None:
        seed += ["--bcrypt-cost", str(bcrypt_cost)]
    for cmd in (["db", "migrate", "--db-url", url], seed):
        p = subprocess.run([sutlab_bin()] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, env=clean_env())
        if p.returncode != 0:
            raise AssertionError("sutlab %s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))


def start_class_server(srv, tmp=None, db=None):
    """setUpClass's start of a server (its files in tmp, its pgtest.FreshDatabase db; either may
    be None): on failure all three go (release_class) before the error goes up, since
    tearDownClass does not run then. Returns srv."""
    try:
        srv.start()
    except BaseException:
        release_class(srv, tmp, db)
        raise
    return srv


def stop_class_server(srv, tmp=None, db=None, timeout=10.0):
    """tearDownClass's end of it: the server must stop cleanly within timeout s (finish() checks
    its exit and sanitizer reports), then srv, tmp and db go whatever happens. srv may be None (a
    set-up that failed before it)."""
    try:
        if srv is not None:
            srv.finish(timeout=timeout)
    finally:
        release_class(srv, tmp, db)


def release_class(srv=None, tmp=None, db=None):
    """What a test class set up, gone without checks (a set-up that failed half-way): the server
    killed, tmp removed, the database dropped; any of them may be None."""
    try:
        if srv is not None:
            srv.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if db is not None:
            db.drop()


def build_request(method, path, headers=None, body=None, version="HTTP/1.1", host="127.0.0.1"):
    """Serialise a request. Adds Host (unless given) and Content-Length for a body."""
    headers = list((headers or {}).items()) if isinstance(headers, dict) else list(headers or [])
    names = {k.lower() for k, _ in headers}
    if "host" not in names:
        headers.insert(0, ("Host", host))
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        headers.append(("Content-Length", str(len(body))))
    out = "%s %s %s\r\n" % (method, path, version)
    out += "".join("%s: %s\r\n" % (k, v) for k, v in headers)
    out += "\r\n"
    return out.encode("latin-1") + (body or b"")


# ----------------------------------------------------------------------------------------------
# The server under test


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer")


class Server(ServerProcess):
    """Runs `$SUTLAB_BIN serve --listen 127.0.0.1:PORT [--workers N] [--docroot D] [extra_args]`.

    - `workers=None` omits --workers (e.g. to test SUTLAB_WORKERS); `listen=False` omits --listen
      (then give `port` and set SUTLAB_LISTEN in `env`).
    - `env`: extra environment variables (every inherited SUTLAB_* variable is removed first).
    - stdout/stderr go to files in a private temp dir (`stdout_path`, `stderr_path`); the
      process's cwd is that dir, so nothing depends on where the test runs.
    - start() waits up to `start_timeout` s for GET `ready_path` == 200 (unless wait_ready=False).
    - On a clean exit of the `with` block (or `finish()`): a server still running is stopped with
      SIGTERM and must exit 0, and its stderr must hold no sanitizer report (ASan/LSan/UBSan/TSan:
      UBSan does not change the exit code, so it is only visible there). Otherwise AssertionError.
    - On any exit it kills the process (if still running) and removes the temp dir.
    """

    def __init__(self, extra_args=(), docroot=None, workers=1, env=None, port=None, listen=True,
                 start_timeout=10.0, wait_ready=True, ready_path="/health_check"):
        self.bin = sutlab_bin()
        self._own_port = listen and port is None  # ours to change if another process takes it
        port = port or free_port()
        self.tmp = tempfile.mkdtemp(prefix="sutlab-it-")
        argv = [self.bin, "serve"]
        if listen:
            argv += ["--listen", "127.0.0.1:%d" % port]
        if workers is not None:
            argv += ["--workers", str(workers)]
        if docroot is not None:
            argv += ["--docroot", docroot]
        super().__init__(argv + list(extra_args), port, os.path.join(self.tmp, "stdout.log"),
                         os.path.join(self.tmp, "stderr.log"), name="sutlab", env=clean_env(env),
                         cwd=self.tmp, ready_path=ready_path, start_timeout=start_timeout)
        self._wait_at_start = wait_ready

    def start(self):
        """Starts it; a free port it chose itself that another process took before the server
        bound it (free_port draws below the kernel's ephemeral range, so no outgoing connection
        takes it, but a test beside this one may draw the same port) is replaced by another,
        twice at most."""
        for attempt in range(3):
            try:
                return super().start(wait=self._wait_at_start)
            except ServerStartError as e:
                if not self._own_port or attempt == 2 or "Address already in use" not in str(e):
                    raise
            listen = self.argv.index("--listen") + 1
            self.port = free_port()
            self.argv[listen] = "127.0.0.1:%d" % self.port

    def sanitizer_report(self):
        """The sanitizer output in the server's stderr, or None."""
        err = self.stderr()
        hits = [err.find(m) for m in SANITIZER_MARKERS if m in err]
        if not hits:
            return None
        start = err.rfind("\n", 0, min(hits)) + 1
        return err[start:start + 6000]

    def finish(self, timeout=10.0):
        """Stop gracefully (if running) and check exit code 0 and no sanitizer report."""
        problems = []
        if self.proc is not None:
            if self.proc.poll() is None:
                rc = self.stop(signal.SIGTERM, timeout=timeout)
                if rc is None:
                    problems.append("did not exit within %.0f s of SIGTERM (killed)" % timeout)
                elif rc != 0:
                    problems.append("exit code %d after SIGTERM" % rc)
            report = self.sanitizer_report()
            if report:
                problems.append("sanitizer report on stderr:\n" + report)
        if problems:
            raise AssertionError("server %s: %s" % (" ".join(self.argv), "\n".join(problems)))

    def close(self):
        self.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                self.finish()
        finally:
            self.close()

    # -- HTTP

    def request(self, method, path, body=None, headers=None, port=None, timeout=10):
        """One request on a fresh connection: (status, headers dict with lowercased names, body bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=dict(headers or {}))
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, headers_dict([(k.lower(), v) for k, v in resp.getheaders()]), data
        finally:
            conn.close()

    def get(self, path, headers=None, port=None):
        return self.request("GET", path, headers=headers, port=port)

    def send_raw(self, data, timeout=5.0, port=None):
        """Send bytes on a fresh connection, return every byte received until EOF (or `timeout`)."""
        s = socket.create_connection(("127.0.0.1", port or self.port), timeout=timeout)
        out = bytearray()
        try:
            s.sendall(data)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                try:
                    chunk = s.recv(65536)
                except socket.timeout:
                    break
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                out += chunk
        finally:
            s.close()
        return bytes(out)

    def raw_conn(self, timeout=5.0, port=None):
        return RawConn(port or self.port, timeout=timeout)

    def metrics(self, port=None, check=True):
        """GET /metrics, parsed (sutlab_lab.services.metrics.parse_metrics; check=False: not format-checked)."""
        status, headers, body = self.get("/metrics", port=port)
        if status != 200:
            raise AssertionError("GET /metrics -> %d %r" % (status, body[:300]))
        return parse_metrics(body.decode("utf-8"), check=check)

    def build_flags(self):
        """{flag: value} of the flags in force, from sutlab_build_info's flags label (--name=value ...)."""
        info = self.metrics(check=False).samples("sutlab_build_info")
        assert info, "no sutlab_build_info in /metrics"
        return dict(item[2:].split("=", 1) for item in info[0][0]["flags"].split())


# ----------------------------------------------------------------------------------------------
# Assertions on /metrics


def check_histograms(testcase, metrics, name):
    """Assert each series of histogram `name` is well-formed: cumulative buckets, +Inf == _count."""
    series = {}
    for (n, lbls), v in metrics.items():
        if n == name + "_bucket":
            d = dict(lbls)
            le = parse_float(d.pop("le"))
            series.setdefault(frozenset(d.items()), []).append((le, v))
    testcase.assertTrue(series, "no %s_bucket samples" % name)
    for key, buckets in series.items():
        buckets.sort()
        les = [le for le, _ in buckets]
        testcase.assertEqual(les[-1], math.inf, "%s%s has no le=\"+Inf\" bucket" % (name, dict(key)))
        testcase.assertIn(60.0, les, "%s%s has no le=\"60\" bucket" % (name, dict(key)))
        values = [v for _, v in buckets]
        for a, b in zip(values, values[1:]):
            testcase.assertLessEqual(a, b, "%s%s buckets not cumulative: %r" % (name, dict(key), buckets))
        count = metrics.get((name + "_count", key))
        total = metrics.get((name + "_sum", key))
        testcase.assertIsNotNone(count, "%s_count%s missing" % (name, dict(key)))
        testcase.assertIsNotNone(total, "%s_sum%s missing" % (name, dict(key)))
        testcase.assertEqual(values[-1], count, "%s%s: +Inf bucket != _count" % (name, dict(key)))
        testcase.assertGreaterEqual(total, 0.0)
    return series


# ----------------------------------------------------------------------------------------------
# Small assertions shared by the test files


_SERVER_TIMING_APP = re.compile(r"(?:^|,)\s*app\s*(?:;[^,]*?)?;\s*dur=\"?([0-9]+(?:\.[0-9]+)?)\"?", re.I)


def server_timing_app_dur(value):
    """The app;dur=<ms> value of a Server-Timing header, or None."""
    m = _SERVER_TIMING_APP.search(value or "")
    return float(m.group(1)) if m else None


def parse_http_date(value):
    dt = email.utils.parsedate_to_datetime(value)
    return dt.timestamp()


def media_type(content_type):
    return (content_type or "").split(";")[0].strip().lower()


def content_type_params(content_type):
    params = {}
    for part in (content_type or "").split(";")[1:]:
        if "=" in part:
            k, v = part.split("=", 1)
            params[k.strip().lower()] = v.strip().strip('"')
    return params
