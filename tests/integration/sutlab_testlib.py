"""Shared helpers for sutlab's integration tests (standard library only).

Every test talks real HTTP to the real server binary, started on a free loopback port:

    with Server(docroot=tmpdir, extra_args=["--gzip"]) as srv:
        status, headers, body = srv.get("/health_check")

Environment:
  SUTLAB_BIN          path to the sutlab binary (required)
  SUTLAB_SOURCE_ROOT  repository top (defaults to two levels above this file)
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
import tempfile
import time
import unittest

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


def clean_env(extra=None):
    """The test process's environment minus every SUTLAB_* variable, plus `extra`.

    The server reads SUTLAB_<FLAG> variables; the harness's own SUTLAB_BIN etc. must not leak in.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUTLAB_")}
    if extra:
        env.update(extra)
    return env


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def port_is_free(port, host="127.0.0.1"):
    """True if nothing accepts connections on host:port and a listener could bind it again."""
    try:
        c = socket.create_connection((host, port), timeout=1)
    except (ConnectionRefusedError, socket.timeout, OSError):
        pass
    else:
        c.close()
        return False
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # SO_REUSEADDR: TIME_WAIT leftovers of closed connections are fine, a listener is not.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, port))
        s.listen(1)
        return True
    except OSError:
        return False
    finally:
        s.close()


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
        start_len = len(self.buf)  # normally 0: the previous response was consumed exactly
        got_any = start_len > 0

        def fill_or_fail():
            nonlocal got_any
            try:
                ok = self._fill()
            except ConnectionResetError:
                if not got_any:
                    raise NoResponse("reset")
                raise IncompleteResponse("reset", self.buf)
            except socket.timeout:
                if not got_any:
                    raise
                raise IncompleteResponse("timeout", self.buf)
            if not ok:
                if not got_any:
                    raise NoResponse("eof")
                raise IncompleteResponse("eof", self.buf)
            got_any = True

        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buf) > 1 << 20:
                raise MalformedResponse("header section over 1 MiB")
            fill_or_fail()
        head_bytes = bytes(self.buf[:end])
        pos = end + 4
        lines = head_bytes.split(b"\r\n")
        m = re.match(rb"^(HTTP/1\.[01]) (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise MalformedResponse("bad status line %r" % lines[0])
        version, status, reason = m.group(1).decode(), int(m.group(2)), (m.group(3) or b"").decode("latin-1")
        hl = []
        for line in lines[1:]:
            hm = re.match(rb"^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$", line)
            if not hm:
                raise MalformedResponse("bad header line %r" % line)
            hl.append((hm.group(1).decode("latin-1").lower(), hm.group(2).decode("latin-1")))
        hd = headers_dict(hl)

        def need(n):
            while len(self.buf) < n:
                fill_or_fail()

        if head or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in header_tokens(hd.get("transfer-encoding")):
            body = bytearray()
            while True:
                while self.buf.find(b"\r\n", pos) < 0:
                    fill_or_fail()
                le = self.buf.find(b"\r\n", pos)
                size_txt = bytes(self.buf[pos:le]).split(b";")[0].strip()
                try:
                    size = int(size_txt, 16)
                except ValueError:
                    raise MalformedResponse("bad chunk size %r" % size_txt)
                pos = le + 2
                if size == 0:
                    # trailers, then an empty line
                    while True:
                        while self.buf.find(b"\r\n", pos) < 0:
                            fill_or_fail()
                        le = self.buf.find(b"\r\n", pos)
                        line = self.buf[pos:le]
                        pos = le + 2
                        if not line:
                            break
                    break
                need(pos + size + 2)
                body += self.buf[pos:pos + size]
                if self.buf[pos + size:pos + size + 2] != b"\r\n":
                    raise MalformedResponse("chunk not followed by CRLF")
                pos += size + 2
            body = bytes(body)
        elif "content-length" in hd:
            try:
                n = int(hd["content-length"])
            except ValueError:
                raise MalformedResponse("bad content-length %r" % hd["content-length"])
            need(pos + n)
            body = bytes(self.buf[pos:pos + n])
            pos += n
        else:
            # delimited by close
            while True:
                try:
                    if not self._fill():
                        break
                except ConnectionResetError:
                    raise IncompleteResponse("reset", self.buf)
                except socket.timeout:
                    raise IncompleteResponse("timeout", self.buf)
            body = bytes(self.buf[pos:])
            pos = len(self.buf)
        raw = bytes(self.buf[:pos])
        del self.buf[:pos]
        self.responses += 1
        return RawResponse(version, status, reason, hl, body, raw)


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


def start_class_server(srv, tmp):
    """setUpClass's start of a server whose files live in tmp: on failure the server is closed and
    tmp removed before the error goes up (tearDownClass does not run then). Returns srv."""
    try:
        srv.start()
    except BaseException:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return srv


def stop_class_server(srv, tmp):
    """tearDownClass's end of it: the server must stop cleanly (finish() checks its exit and
    sanitizer reports), and tmp goes whatever happens."""
    try:
        srv.finish()
    finally:
        srv.close()
        shutil.rmtree(tmp, ignore_errors=True)


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


class ServerStartError(Exception):
    pass


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer")


class Server:
    """Runs `$SUTLAB_BIN serve --listen 127.0.0.1:PORT [--workers N] [--docroot D] [extra_args]`.

    - `workers=None` omits --workers (e.g. to test SUTLAB_WORKERS); `listen=False` omits --listen
      (then give `port` and set SUTLAB_LISTEN in `env`).
    - `env`: extra environment variables (every inherited SUTLAB_* variable is removed first).
    - stdout/stderr go to files in a private temp dir (`stdout_path`, `stderr_path`); the
      process's cwd is that dir, so nothing depends on where the test runs.
    - On enter it waits up to `start_timeout` s for GET /health_check == 200.
    - On a clean exit of the `with` block (or `finish()`): a server still running is stopped with
      SIGTERM and must exit 0, and its stderr must hold no sanitizer report (ASan/LSan/UBSan/TSan:
      UBSan does not change the exit code, so it is only visible there). Otherwise AssertionError.
    - On any exit it kills the process (if still running) and removes the temp dir.
    """

    def __init__(self, extra_args=(), docroot=None, workers=1, env=None, port=None, listen=True,
                 start_timeout=10.0, wait_ready=True):
        self.bin = sutlab_bin()
        self.port = port or free_port()
        self.tmp = tempfile.mkdtemp(prefix="sutlab-it-")
        self.stdout_path = os.path.join(self.tmp, "stdout.log")
        self.stderr_path = os.path.join(self.tmp, "stderr.log")
        args = [self.bin, "serve"]
        if listen:
            args += ["--listen", "127.0.0.1:%d" % self.port]
        if workers is not None:
            args += ["--workers", str(workers)]
        if docroot is not None:
            args += ["--docroot", docroot]
        args += list(extra_args)
        self.args = args
        self.env = clean_env(env)
        self.start_timeout = start_timeout
        self.wait_ready = wait_ready
        self.proc = None
        self.ready_requests = 0  # requests the readiness probe got a response for
        self.returncode = None

    # -- lifecycle

    def start(self):
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(self.args, stdout=self._out, stderr=self._err, env=self.env,
                                     cwd=self.tmp, stdin=subprocess.DEVNULL)
        if self.wait_ready:
            self._wait_ready()
        return self

    def _wait_ready(self):
        deadline = time.monotonic() + self.start_timeout
        last = "no attempt"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerStartError("server exited with %s before becoming ready: %s\nstderr: %s"
                                       % (self.proc.returncode, " ".join(self.args), self.stderr()))
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health_check")
                resp = conn.getresponse()
                resp.read()
                conn.close()
                self.ready_requests += 1
                if resp.status == 200:
                    return
                last = "status %d" % resp.status
            except (OSError, http.client.HTTPException) as e:
                last = repr(e)
            time.sleep(0.05)
        self.kill()
        raise ServerStartError("server not ready within %.0f s (%s): %s\nstderr: %s"
                               % (self.start_timeout, last, " ".join(self.args), self.stderr()))

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=10.0):
        """Send `sig`, wait up to `timeout` s. Returns the exit code, or None if it had to be killed."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        self.returncode = self.proc.returncode
        return self.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

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
            raise AssertionError("server %s: %s" % (" ".join(self.args), "\n".join(problems)))

    def close(self):
        self.kill()
        for f in ("_out", "_err"):
            fh = getattr(self, f, None)
            if fh:
                fh.close()
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

    def stdout(self):
        return _read_text(self.stdout_path)

    def stderr(self):
        return _read_text(self.stderr_path)

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

    def metrics(self, port=None):
        status, headers, body = self.get("/metrics", port=port)
        if status != 200:
            raise AssertionError("GET /metrics -> %d %r" % (status, body[:300]))
        return parse_metrics(body.decode("utf-8"))


def _read_text(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


# ----------------------------------------------------------------------------------------------
# Prometheus text format 0.0.4


class MetricsFormatError(AssertionError):
    pass


class Metrics(dict):
    """(name, frozenset(labels.items())) -> float, plus `types` {family: type} and `order`."""

    def get_value(self, name, **labels):
        return self.get((name, frozenset(labels.items())))

    def value(self, name, default=0.0, **labels):
        v = self.get((name, frozenset(labels.items())))
        return default if v is None else v

    def samples(self, name, **match):
        """[(labels dict, value)] for `name` whose labels include every item of `match`."""
        out = []
        for (n, lbls), v in self.items():
            if n != name:
                continue
            d = dict(lbls)
            if all(d.get(k) == mv for k, mv in match.items()):
                out.append((d, v))
        return out

    def total(self, name, **match):
        return sum(v for _, v in self.samples(name, **match))


_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL_NAME = r"[a-zA-Z_][a-zA-Z0-9_]*"
_FLOAT = r"[+-]?(?:Inf|inf|NaN|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_SAMPLE_RE = re.compile(r"^(%s)(?:\{(.*)\})?[ \t]+(%s)(?:[ \t]+(-?[0-9]+))?[ \t]*$" % (_NAME, _FLOAT))
_TYPE_RE = re.compile(r"^#[ \t]+TYPE[ \t]+(%s)[ \t]+(counter|gauge|histogram|summary|untyped)[ \t]*$" % _NAME)
_HELP_RE = re.compile(r"^#[ \t]+HELP[ \t]+(%s)(?:[ \t]+(.*))?$" % _NAME)


def parse_float(s):
    t = s.lower()
    if t in ("+inf", "inf"):
        return math.inf
    if t == "-inf":
        return -math.inf
    if t in ("nan", "+nan", "-nan"):
        return math.nan
    return float(s)


def _parse_labels(text, lineno):
    labels = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        m = re.compile(_LABEL_NAME).match(text, i)
        if not m:
            raise MetricsFormatError("line %d: bad label name at %r" % (lineno, text[i:]))
        lname = m.group(0)
        i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != "=":
            raise MetricsFormatError("line %d: expected '=' after label %s" % (lineno, lname))
        i += 1
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != '"':
            raise MetricsFormatError("line %d: label %s value not quoted" % (lineno, lname))
        i += 1
        val = []
        while True:
            if i >= n:
                raise MetricsFormatError("line %d: unterminated value for label %s" % (lineno, lname))
            c = text[i]
            if c == "\\":
                if i + 1 >= n:
                    raise MetricsFormatError("line %d: dangling backslash" % lineno)
                e = text[i + 1]
                if e == "n":
                    val.append("\n")
                elif e in '\\"':
                    val.append(e)
                else:
                    raise MetricsFormatError("line %d: bad escape \\%s in label %s" % (lineno, e, lname))
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                val.append(c)
                i += 1
        if lname in labels:
            raise MetricsFormatError("line %d: duplicate label %s" % (lineno, lname))
        labels[lname] = "".join(val)
        while i < n and text[i] in " \t":
            i += 1
        if i < n:
            if text[i] != ",":
                raise MetricsFormatError("line %d: expected ',' between labels, got %r" % (lineno, text[i:]))
            i += 1
    return labels


def _family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix):
            base = name[: -len(suffix)]
            if types.get(base) in ("histogram", "summary"):
                if suffix == "_bucket" and types[base] != "histogram":
                    continue
                return base
    return name


def parse_metrics(text):
    """Parse Prometheus text exposition format 0.0.4, checking every line is well-formed.

    Checks: sample/HELP/TYPE/comment/blank syntax, label syntax and escapes, float values,
    at most one TYPE and one HELP per family, a TYPE line comes before every sample of its family,
    the lines of a family are contiguous, no duplicate (name, labels), histogram buckets carry `le`.
    Returns a Metrics dict.
    """
    if text and not text.endswith("\n"):
        raise MetricsFormatError("exposition does not end with a newline")
    result = Metrics()
    types = {}
    helps = set()
    seen_samples = set()       # families that had samples
    finished = set()           # families whose group has ended
    current = None
    for lineno, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        if line.strip() == "":
            continue
        family = None
        if line.startswith("#"):
            m = _TYPE_RE.match(line)
            if m:
                family = m.group(1)
                if family in types:
                    raise MetricsFormatError("line %d: second TYPE for %s" % (lineno, family))
                if family in seen_samples:
                    raise MetricsFormatError("line %d: TYPE for %s after its samples" % (lineno, family))
                types[family] = m.group(2)
            elif re.match(r"^#[ \t]+TYPE\b", line):
                raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
            elif re.match(r"^#[ \t]+HELP\b", line):
                m = _HELP_RE.match(line)
                if not m:
                    raise MetricsFormatError("line %d: malformed %r" % (lineno, line))
                family = m.group(1)
                if family in helps:
                    raise MetricsFormatError("line %d: second HELP for %s" % (lineno, family))
                helps.add(family)
            else:
                continue  # plain comment
        else:
            m = _SAMPLE_RE.match(line)
            if not m:
                raise MetricsFormatError("line %d: malformed sample %r" % (lineno, line))
            name, label_text, value = m.group(1), m.group(2), m.group(3)
            labels = _parse_labels(label_text, lineno) if label_text else {}
            family = _family_of(name, types)
            ftype = types.get(family)
            if ftype == "histogram" and name == family + "_bucket":
                if "le" not in labels:
                    raise MetricsFormatError("line %d: histogram bucket without le" % lineno)
                parse_float(labels["le"])
            key = (name, frozenset(labels.items()))
            if key in result:
                raise MetricsFormatError("line %d: duplicate sample %r" % (lineno, line))
            result[key] = parse_float(value)
            seen_samples.add(family)
        if family != current:
            if family in finished:
                raise MetricsFormatError("line %d: lines of %s are not contiguous" % (lineno, family))
            if current is not None:
                finished.add(current)
            current = family
    result.types = types
    return result


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
