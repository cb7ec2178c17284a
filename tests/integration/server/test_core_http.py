#!/usr/bin/python3
"""Integration tests: the HTTP core of sutlab.

Health check, static files (types, ETag/Last-Modified, conditional GET, ranges, traversal),
JSON errors (404/405/413), common headers, keep-alive on/off for HTTP/1.0 and 1.1, gzip on/off.
Expectations come from the contracts (README.md's endpoint and flag tables) and RFC 9110/9112, never from
the server's own output.
"""

import calendar
import gzip
import json
import os
import tempfile
import threading
import time
import unittest
import uuid

from sutlab_testlib import (
    NoResponse, RawConn, Server, build_request, header_tokens, media_type, parse_http_date,
    parse_metrics, server_timing_app_dur, source_root, start_class_server, stop_class_server,
)

MiB = 1 << 20
FIXED_MTIME = calendar.timegm((2021, 3, 4, 5, 6, 7))  # a whole second, long ago
SECRET = "TOP-SECRET-" + uuid.uuid4().hex

# a 1x1 PNG
PNG_BYTES = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def make_docroot(base):
    """A docroot with one file per type under test, plus a secret file just outside it."""
    root = os.path.join(base, "docroot")
    os.makedirs(os.path.join(root, "sub", "dir"))
    files = {
        "hello.txt": b"hello from the sutlab docroot\n" * 3,
        "data.json": json.dumps({"items": [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", "c"],
                                            "description": "a compressible description of item %d" % i}
                                           for i in range(200)]}).encode(),
        "big.txt": b"".join(b"line %05d of a large, very compressible text file\n" % i for i in range(400)),
        "page.html": b"<!doctype html><title>t</title><p>hi</p>\n",
        "style.css": b"body { color: #123456; }\n",
        "app.js": b"console.log('sutlab');\n",
        "pixel.png": PNG_BYTES,
        "sub/dir/nested.txt": b"nested file\n",
    }
    for name, data in files.items():
        path = os.path.join(root, name)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    with open(os.path.join(base, "secret.txt"), "w") as f:
        f.write(SECRET + "\n")
    return root, files


def assert_json_error(tc, status, headers, body, expected_status):
    tc.assertEqual(status, expected_status, body[:300])
    tc.assertEqual(media_type(headers.get("content-type")), "application/json",
                   "error %d must be JSON, got Content-Type %r body %r" % (status, headers.get("content-type"), body[:200]))
    try:
        doc = json.loads(body.decode("utf-8"))
    except ValueError:
        tc.fail("error body is not JSON: %r" % body[:300])
    tc.assertIsInstance(doc, dict, body)
    tc.assertIn("errors", doc, body)
    errors = doc["errors"]
    tc.assertIsInstance(errors, dict, body)
    tc.assertTrue(errors, "errors object is empty: %r" % body)
    nonempty = False
    for field, messages in errors.items():
        tc.assertIsInstance(messages, list, body)
        for m in messages:
            tc.assertIsInstance(m, str, body)
            nonempty = nonempty or bool(m.strip())
    tc.assertTrue(nonempty, "no non-empty error message in %r" % body)


def assert_common_headers(tc, what, status, headers, require_content_type=True):
    tc.assertTrue(headers.get("server", "").strip(), "%s (%d): no Server header: %r" % (what, status, headers))
    tc.assertIn("date", headers, "%s (%d): no Date header" % (what, status))
    try:
        date = parse_http_date(headers["date"])
    except (TypeError, ValueError):
        tc.fail("%s: unparsable Date %r" % (what, headers["date"]))
    tc.assertLess(abs(date - time.time()), 120, "%s: Date %r is far from now" % (what, headers["date"]))
    if require_content_type:
        tc.assertTrue(headers.get("content-type", "").strip(), "%s (%d): no Content-Type: %r" % (what, status, headers))
    st = headers.get("server-timing")
    tc.assertIsNotNone(st, "%s (%d): no Server-Timing header: %r" % (what, status, headers))
    dur = server_timing_app_dur(st)
    tc.assertIsNotNone(dur, "%s: Server-Timing %r has no app;dur=<number>" % (what, st))
    tc.assertGreaterEqual(dur, 0.0)


def send_oversized_content_length(port, path="/rpc/echo"):
    """Headers announcing 1 MiB + 1 bytes plus 1000 bytes of body; never the rest."""
    conn = RawConn(port, timeout=5)
    head = build_request("POST", path, headers=[("Content-Type", "application/json"),
                                                 ("Content-Length", str(MiB + 1))])
    conn.send(head + b"x" * 1000)
    return conn


class CoreHTTP(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-http-")
        cls.docroot, cls.files = make_docroot(cls.tmp)
        cls.srv = start_class_server(Server(docroot=cls.docroot), cls.tmp)

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp)

    # ------------------------------------------------------------------ health check

    def test_health_check(self):
        status, headers, body = self.srv.get("/health_check")
        self.assertEqual(status, 200)
        self.assertEqual(media_type(headers.get("content-type")), "text/plain")
        self.assertEqual(body, b"ok")
        self.assertEqual(headers.get("content-length"), "2")

    def test_health_check_ignores_query(self):
        status, _, body = self.srv.get("/health_check?x=1")
        self.assertEqual((status, body), (200, b"ok"))

    # ------------------------------------------------------------------ static files

    def test_default_docroot_serves_status_txt(self):
        with open(os.path.join(source_root(), "fixtures", "static", "status.txt"), "rb") as f:
            expected = f.read()
        with Server() as srv:  # no --docroot: the built-in fixtures/static (server cwd is a temp dir)
            status, headers, body = srv.get("/status.txt")
        self.assertEqual(status, 200, body[:200])
        self.assertEqual(body, expected)
        self.assertEqual(media_type(headers.get("content-type")), "text/plain")

    def test_static_bytes_and_types(self):
        expected_types = {
            "hello.txt": {"text/plain"},
            "data.json": {"application/json"},
            "big.txt": {"text/plain"},
            "page.html": {"text/html"},
            "style.css": {"text/css"},
            "app.js": {"application/javascript", "text/javascript"},
            "pixel.png": {"image/png"},
            "sub/dir/nested.txt": {"text/plain"},
        }
        for name, data in self.files.items():
            with self.subTest(file=name):
                status, headers, body = self.srv.get("/" + name)
                self.assertEqual(status, 200)
                self.assertEqual(body, data)
                self.assertEqual(headers.get("content-length"), str(len(data)))
                self.assertIn(media_type(headers.get("content-type")), expected_types[name])
                self.assertNotIn("content-encoding", headers)

    def test_head_static(self):
        conn = self.srv.raw_conn()
        with conn:
            conn.send(build_request("HEAD", "/hello.txt"))
            r = conn.read_response(head=True)
            self.assertEqual(r.status, 200)
            self.assertEqual(r.headers.get("content-length"), str(len(self.files["hello.txt"])))
            self.assertEqual(r.body, b"")
            # the connection must still be usable: no stray body bytes were sent
            conn.send(build_request("GET", "/health_check"))
            r2 = conn.read_response()
            self.assertEqual((r2.status, r2.body), (200, b"ok"))

    def test_missing_file_is_404_json(self):
        status, headers, body = self.srv.get("/no-such-file-%s.txt" % uuid.uuid4().hex)
        assert_json_error(self, status, headers, body, 404)

    def test_etag_and_last_modified(self):
        s1, h1, _ = self.srv.get("/hello.txt")
        s2, h2, _ = self.srv.get("/hello.txt")
        s3, h3, _ = self.srv.get("/data.json")
        self.assertEqual((s1, s2, s3), (200, 200, 200))
        etag = h1.get("etag")
        self.assertIsNotNone(etag, "no ETag on a static file: %r" % h1)
        self.assertRegex(etag, r'^(W/)?"[\x21\x23-\x7e]*"$', "ETag is not an entity-tag")
        self.assertEqual(etag, h2.get("etag"), "ETag not stable across requests")
        self.assertNotEqual(etag, h3.get("etag"), "two different files share an ETag")
        self.assertIn("last-modified", h1)
        self.assertEqual(parse_http_date(h1["last-modified"]), FIXED_MTIME,
                         "Last-Modified %r is not the file's mtime" % h1["last-modified"])

    def test_etag_changes_when_file_changes(self):
        path = os.path.join(self.docroot, "mutable.txt")
        with open(path, "wb") as f:
            f.write(b"version one\n")
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        status, h1, body = self.srv.get("/mutable.txt")
        self.assertEqual((status, body), (200, b"version one\n"))
        with open(path, "wb") as f:
            f.write(b"version two, longer\n")
        os.utime(path, (FIXED_MTIME + 3600, FIXED_MTIME + 3600))
        deadline = time.monotonic() + 3
        while True:
            status, h2, body = self.srv.get("/mutable.txt")
            if body == b"version two, longer\n" or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual((status, body), (200, b"version two, longer\n"), "changed file not served within 3 s")
        self.assertNotEqual(h1.get("etag"), h2.get("etag"), "ETag did not change with the file")
        self.assertEqual(parse_http_date(h2["last-modified"]), FIXED_MTIME + 3600)

    def test_if_none_match(self):
        _, h, _ = self.srv.get("/hello.txt")
        etag = h["etag"]
        status, h304, body = self.srv.get("/hello.txt", headers={"If-None-Match": etag})
        self.assertEqual(status, 304)
        self.assertEqual(body, b"")
        self.assertEqual(h304.get("etag"), etag, "a 304 must repeat the ETag (RFC 9110 15.4.5)")
        status, _, body = self.srv.get("/hello.txt", headers={"If-None-Match": '"not-the-etag"'})
        self.assertEqual(status, 200)
        self.assertEqual(body, self.files["hello.txt"])

    def test_if_modified_since(self):
        _, h, _ = self.srv.get("/hello.txt")
        lm = h["last-modified"]
        status, _, body = self.srv.get("/hello.txt", headers={"If-Modified-Since": lm})
        self.assertEqual((status, body), (304, b""))
        later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(FIXED_MTIME + 86400))
        status, _, body = self.srv.get("/hello.txt", headers={"If-Modified-Since": later})
        self.assertEqual((status, body), (304, b""), "IMS after the mtime must give 304")
        earlier = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(FIXED_MTIME - 86400))
        status, _, body = self.srv.get("/hello.txt", headers={"If-Modified-Since": earlier})
        self.assertEqual(status, 200)
        self.assertEqual(body, self.files["hello.txt"])

    def test_range(self):
        data = self.files["hello.txt"]
        size = len(data)
        cases = [("bytes=0-3", 0, 3), ("bytes=5-", 5, size - 1), ("bytes=-5", size - 5, size - 1),
                 ("bytes=10-%d" % (size + 100), 10, size - 1)]
        for rng, first, last in cases:
            with self.subTest(range=rng):
                status, headers, body = self.srv.get("/hello.txt", headers={"Range": rng})
                self.assertEqual(status, 206)
                self.assertEqual(headers.get("content-range"), "bytes %d-%d/%d" % (first, last, size))
                self.assertEqual(body, data[first:last + 1])
                self.assertEqual(headers.get("content-length"), str(last - first + 1))

    def test_range_unsatisfiable(self):
        size = len(self.files["hello.txt"])
        for rng in ("bytes=%d-%d" % (size, size + 10), "bytes=%d-" % (size + 1000)):
            with self.subTest(range=rng):
                status, headers, body = self.srv.get("/hello.txt", headers={"Range": rng})
                self.assertEqual(status, 416)
                self.assertNotIn(self.files["hello.txt"], body)
                if "content-range" in headers:
                    self.assertEqual(headers["content-range"], "bytes */%d" % size)

    def test_small_file_headers_match_the_file_handlers(self):
        """Small files are sent from a per-pass copy (servers/core/docroot.c), anything else by
        libh2o's file handler: a client must not tell them apart. A Range request always goes to
        libh2o's handler, so its 206 gives that handler's validators for the same file."""
        _, small, _ = self.srv.get("/hello.txt")
        _, ranged, _ = self.srv.get("/hello.txt", headers={"Range": "bytes=0-"})
        for name in ("content-type", "last-modified", "etag"):
            with self.subTest(header=name):
                self.assertEqual(small.get(name), ranged.get(name))
        self.assertEqual(small.get("accept-ranges"), "bytes")
        _, large, _ = self.srv.get("/big.txt")  # over 16 KiB: libh2o's handler
        varying = {"date", "server-timing", "content-length", "etag"}
        self.assertEqual(set(small) - varying, set(large) - varying)

    def test_files_around_the_copy_limit(self):
        """16 KiB and less is copied, more is left to libh2o's handler: both serve every byte, and
        a file that grows past the limit (or shrinks below it) is served whole."""
        path = os.path.join(self.docroot, "edge.bin")
        for size in (0, 1, 16383, 16384, 16385, 70000, 16384, 5):
            data = bytes((i * 7 + size) % 251 for i in range(size))
            with open(path, "wb") as f:
                f.write(data)
            with self.subTest(size=size):
                status, headers, body = self.srv.get("/edge.bin")
                self.assertEqual((status, len(body)), (200, size))
                self.assertEqual(body, data)
                self.assertEqual(headers.get("content-length"), str(size))
                self.assertRegex(headers.get("etag", ""), r'^"[0-9a-f]+-%x"$' % size)

    def test_fifo_is_404_and_does_not_stall_the_worker(self):
        """A FIFO in the docroot: libh2o's handler would block its worker in open() until a
        writer came (the server then stops answering, even SIGTERM). It is a 404, at once."""
        path = os.path.join(self.docroot, "pipe-%s" % uuid.uuid4().hex[:8])
        os.mkfifo(path)
        try:
            with RawConn(self.srv.port, timeout=3) as conn:
                conn.send(build_request("GET", "/" + os.path.basename(path)))
                r = conn.read_response()
            assert_json_error(self, r.status, r.headers, r.body, 404)
            status, _, body = self.srv.get("/health_check")
            self.assertEqual((status, body), (200, b"ok"))
        finally:
            os.unlink(path)

    def test_path_traversal(self):
        paths = [
            "/../etc/passwd", "/../../../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
            "/..%2f..%2fetc/passwd", "/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
            "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2E%2E/secret.txt",
            "/sub/../../secret.txt", "/sub/%2e%2e/%2e%2e/secret.txt", "/sub/dir/..%2f..%2f..%2fsecret.txt",
            "/./../secret.txt", "/sub/dir/../../../secret.txt", "/..\\secret.txt", "/.%2e/secret.txt",
        ]
        for p in paths:
            with self.subTest(path=p):
                conn = self.srv.raw_conn()
                with conn:
                    conn.send(build_request("GET", p, headers=[("Connection", "close")]))
                    try:
                        r = conn.read_response()
                    except NoResponse:
                        continue  # closing the connection serves nothing either
                self.assertIn(r.status, (400, 403, 404), "%s -> %d %r" % (p, r.status, r.body[:200]))
                self.assertNotIn(SECRET.encode(), r.body)
                self.assertNotIn(b"root:x:0:0", r.body)

    # ------------------------------------------------------------------ JSON errors

    def test_unknown_route_404_json(self):
        for path in ("/no/such/route", "/api-nope-%s" % uuid.uuid4().hex, "/health_check/extra"):
            with self.subTest(path=path):
                status, headers, body = self.srv.get(path)
                assert_json_error(self, status, headers, body, 404)

    def test_405_json_with_allow(self):
        cases = [("POST", "/health_check", b"{}"), ("DELETE", "/metrics", None), ("PUT", "/health_check", b"x"),
                 ("POST", "/hello.txt", b"{}"), ("DELETE", "/hello.txt", None)]
        for method, path, body in cases:
            with self.subTest(method=method, path=path):
                status, headers, rbody = self.srv.request(method, path, body=body,
                                                          headers={"Content-Type": "application/json"})
                assert_json_error(self, status, headers, rbody, 405)
                allow = {t.upper() for t in header_tokens(headers.get("allow"))}
                self.assertIn("GET", allow, "Allow header %r" % headers.get("allow"))
                self.assertNotIn(method, allow, "Allow header %r lists the rejected method" % headers.get("allow"))

    def test_post_to_default_docroot_file_is_405(self):
        with Server() as srv:
            status, headers, body = srv.request("POST", "/status.txt", body=b"{}",
                                                headers={"Content-Type": "application/json"})
        assert_json_error(self, status, headers, body, 405)
        self.assertIn("GET", {t.upper() for t in header_tokens(headers.get("allow"))})

    def test_413_content_length_without_reading_body(self):
        conn = send_oversized_content_length(self.srv.port)
        with conn:
            try:
                r = conn.read_response()
            except Exception as e:  # timeout: the server waited for the body
                self.fail("no 413 before the body was sent (server waits for the 1 MiB body?): %r" % e)
        assert_json_error(self, r.status, r.headers, r.body, 413)
        assert_common_headers(self, "413", r.status, r.headers)

    def test_413_chunked(self):
        conn = self.srv.raw_conn(timeout=10)
        head = build_request("POST", "/rpc/echo", headers=[("Content-Type", "application/json"),
                                                            ("Transfer-Encoding", "chunked")])
        chunk = b"y" * 65536
        stop = threading.Event()

        def sender():
            try:
                conn.send(head)
                sent = 0
                while sent <= MiB + 65536 and not stop.is_set():  # > 1 MiB, never the last chunk
                    conn.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
                    sent += len(chunk)
            except OSError:
                pass  # the server may close after answering

        t = threading.Thread(target=sender, daemon=True)
        t.start()
        with conn:
            try:
                r = conn.read_response()
            except Exception as e:
                self.fail("no 413 for a chunked body over 1 MiB without its final chunk: %r" % e)
            finally:
                stop.set()
        t.join(5)
        assert_json_error(self, r.status, r.headers, r.body, 413)

    def test_body_at_limit_is_not_413(self):
        # exactly 1 MiB is allowed: whatever the route answers, it is not 413
        status, _, body = self.srv.request("POST", "/no-such-route", body=b"z" * MiB,
                                           headers={"Content-Type": "application/octet-stream"})
        self.assertNotEqual(status, 413, body[:200])
        self.assertLess(status, 500, body[:200])

    # ------------------------------------------------------------------ headers on every response

    def test_common_headers_everywhere(self):
        srv = self.srv
        _, h, _ = srv.get("/hello.txt")
        etag = h["etag"]
        checks = [
            ("GET /health_check", srv.get("/health_check"), True),
            ("GET /hello.txt", srv.get("/hello.txt"), True),
            ("GET /pixel.png", srv.get("/pixel.png"), True),
            ("GET /metrics", srv.get("/metrics"), True),
            ("GET unknown", srv.get("/nope/nope"), True),
            ("POST /health_check", srv.request("POST", "/health_check", body=b"{}"), True),
            ("POST /hello.txt", srv.request("POST", "/hello.txt", body=b"{}"), True),
            ("Range", srv.get("/hello.txt", headers={"Range": "bytes=0-3"}), True),
            ("416", srv.get("/hello.txt", headers={"Range": "bytes=100000-"}), True),
            ("304", srv.get("/hello.txt", headers={"If-None-Match": etag}), False),
            ("HEAD /health_check", srv.request("HEAD", "/health_check"), True),
        ]
        for what, (status, headers, _), need_ct in checks:
            with self.subTest(what=what):
                assert_common_headers(self, what, status, headers, require_content_type=need_ct)

    # ------------------------------------------------------------------ keep-alive (default: on)

    def test_http11_keepalive_serves_several_requests(self):
        with self.srv.raw_conn() as conn:
            for path, expect in (("/health_check", b"ok"), ("/hello.txt", self.files["hello.txt"]),
                                 ("/nope", None), ("/health_check", b"ok")):
                conn.send(build_request("GET", path))
                r = conn.read_response()
                self.assertNotIn("close", header_tokens(r.headers.get("connection")), r)
                if expect is not None:
                    self.assertEqual(r.body, expect)
            self.assertEqual(conn.responses, 4)

    def test_http11_pipelined(self):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", "/health_check") * 3 + build_request("GET", "/hello.txt"))
            for _ in range(3):
                r = conn.read_response()
                self.assertEqual((r.status, r.body), (200, b"ok"))
            r = conn.read_response()
            self.assertEqual((r.status, r.body), (200, self.files["hello.txt"]))

    def test_http11_keepalive_survives_short_idle(self):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", "/health_check"))
            self.assertEqual(conn.read_response().status, 200)
            time.sleep(2)  # default keepalive timeout is 10 s
            conn.send(build_request("GET", "/health_check"))
            self.assertEqual(conn.read_response().body, b"ok")

    def test_http11_connection_close_is_honoured(self):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", "/health_check", headers=[("Connection", "close")]))
            r = conn.read_response()
            self.assertEqual(r.body, b"ok")
            self.assertIn("close", header_tokens(r.headers.get("connection")))
            self.assertIsNotNone(conn.wait_eof(3), "server kept the connection open after Connection: close")

    def test_http10_keepalive_like_ab_k(self):
        # ab -k sends HTTP/1.0 with "Connection: Keep-Alive" and waits for the header in the reply
        with self.srv.raw_conn() as conn:
            for path in ("/health_check", "/hello.txt", "/nope-404", "/health_check"):
                with self.subTest(path=path):
                    conn.send(build_request("GET", path, version="HTTP/1.0",
                                            headers=[("Connection", "Keep-Alive"), ("User-Agent", "ApacheBench/2.3")]))
                    r = conn.read_response()
                    self.assertIn("keep-alive", header_tokens(r.headers.get("connection")),
                                  "HTTP/1.0 keep-alive request to %s: reply lacks Connection: keep-alive: %r" % (path, r))
                    self.assertIn("content-length", r.headers, "a 1.0 keep-alive reply needs Content-Length")
                    self.assertNotIn("chunked", header_tokens(r.headers.get("transfer-encoding")),
                                     "chunked encoding is not HTTP/1.0")
            self.assertEqual(conn.responses, 4)

    def test_http10_without_keepalive_closes(self):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", "/health_check", version="HTTP/1.0"))
            r = conn.read_response()
            self.assertEqual(r.body, b"ok")
            self.assertNotIn("keep-alive", header_tokens(r.headers.get("connection")))
            self.assertIsNotNone(conn.wait_eof(3), "HTTP/1.0 request without keep-alive left open")

    # ------------------------------------------------------------------ gzip off (this server)

    def test_no_gzip_by_default(self):
        for path in ("/data.json", "/big.txt", "/metrics"):
            with self.subTest(path=path):
                status, headers, body = self.srv.get(path, headers={"Accept-Encoding": "gzip, deflate"})
                self.assertEqual(status, 200)
                self.assertNotIn("content-encoding", headers)
                if path != "/metrics":
                    self.assertEqual(body, self.files[path[1:]])


class KeepAliveOff(unittest.TestCase):
    """--keepalive-timeout 0: every response says Connection: close and the socket is closed."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-ka0-")
        cls.docroot, cls.files = make_docroot(cls.tmp)
        cls.srv = start_class_server(Server(docroot=cls.docroot, extra_args=["--keepalive-timeout", "0"]), cls.tmp)

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp)

    def check_closed_after_one(self, version, headers, path="/health_check"):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", path, version=version, headers=headers))
            r = conn.read_response()
            self.assertEqual(r.status, 200 if path != "/nope" else 404)
            tokens = header_tokens(r.headers.get("connection"))
            self.assertIn("close", tokens, "%s %r: reply lacks Connection: close: %r" % (version, headers, r))
            self.assertNotIn("keep-alive", tokens)
            self.assertIsNotNone(conn.wait_eof(3), "%s: server did not close the socket" % version)
            self.assertEqual(bytes(conn.buf), b"", "bytes after the response")

    def test_http11(self):
        for path in ("/health_check", "/hello.txt", "/nope"):
            with self.subTest(path=path):
                self.check_closed_after_one("HTTP/1.1", [], path)

    def test_http11_explicit_keepalive(self):
        self.check_closed_after_one("HTTP/1.1", [("Connection", "keep-alive")])

    def test_http10_keepalive(self):
        for path in ("/health_check", "/hello.txt", "/nope"):
            with self.subTest(path=path):
                self.check_closed_after_one("HTTP/1.0", [("Connection", "Keep-Alive")], path)

    def test_pipelined_second_request_not_served(self):
        with self.srv.raw_conn() as conn:
            conn.send(build_request("GET", "/health_check") * 2)
            r = conn.read_response()
            self.assertEqual(r.body, b"ok")
            self.assertIsNotNone(conn.wait_eof(3))
            self.assertEqual(bytes(conn.buf), b"", "a second response was sent on a close-mode connection")


class KeepAliveTimeout(unittest.TestCase):
    def test_idle_connection_closed_after_timeout(self):
        with Server(extra_args=["--keepalive-timeout", "1"]) as srv:
            with srv.raw_conn(timeout=10) as conn:
                conn.send(build_request("GET", "/health_check"))
                r = conn.read_response()
                self.assertEqual(r.body, b"ok")
                self.assertNotIn("close", header_tokens(r.headers.get("connection")))
                waited = conn.wait_eof(6)
            self.assertIsNotNone(waited, "idle connection still open 6 s after a 1 s keepalive timeout")
            self.assertGreaterEqual(waited, 0.5, "closed after %.2f s, before the 1 s timeout" % waited)
            self.assertLessEqual(waited, 3.5, "closed only after %.2f s" % waited)
            # and the server keeps working
            self.assertEqual(srv.get("/health_check")[2], b"ok")


class Gzip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sutlab-gz-")
        cls.docroot, cls.files = make_docroot(cls.tmp)
        cls.srv = start_class_server(Server(docroot=cls.docroot, extra_args=["--gzip"]), cls.tmp)

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, cls.tmp)

    def test_gzip_static_json_and_text(self):
        for name in ("data.json", "big.txt"):
            with self.subTest(file=name):
                self.assertGreater(len(self.files[name]), 15000)
                status, headers, body = self.srv.get("/" + name, headers={"Accept-Encoding": "gzip"})
                self.assertEqual(status, 200)
                self.assertEqual(headers.get("content-encoding"), "gzip", headers)
                self.assertEqual(gzip.decompress(body), self.files[name])
                self.assertLess(len(body), len(self.files[name]) // 2, "hardly compressed")

    def test_gzip_among_several_encodings(self):
        # what real clients send: browsers, curl --compressed, python-requests/locust, JMeter
        for ae in ("gzip, deflate, br", "deflate, gzip, br, zstd", "gzip, deflate", "br, gzip"):
            with self.subTest(accept_encoding=ae):
                status, headers, body = self.srv.get("/data.json", headers={"Accept-Encoding": ae})
                self.assertEqual(status, 200)
                self.assertEqual(headers.get("content-encoding"), "gzip", headers)
                self.assertEqual(gzip.decompress(body), self.files["data.json"])

    def test_gzip_with_qvalue(self):
        # RFC 9110 12.5.3: "gzip;q=0.8" accepts gzip (q > 0); "gzip;q=0" refuses it
        status, headers, body = self.srv.get("/data.json", headers={"Accept-Encoding": "deflate, gzip;q=0.8"})
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("content-encoding"), "gzip",
                         "Accept-Encoding 'deflate, gzip;q=0.8' got no gzip: %r" % headers)
        self.assertEqual(gzip.decompress(body), self.files["data.json"])
        status, headers, body = self.srv.get("/data.json", headers={"Accept-Encoding": "gzip;q=0, identity"})
        self.assertEqual(status, 200)
        self.assertNotIn("content-encoding", headers, "gzip;q=0 means 'not gzip'")
        self.assertEqual(body, self.files["data.json"])

    def test_gzip_metrics(self):
        status, headers, body = self.srv.get("/metrics", headers={"Accept-Encoding": "gzip"})
        self.assertEqual(status, 200)
        self.assertEqual(headers.get("content-encoding"), "gzip", headers)
        m = parse_metrics(gzip.decompress(body).decode("utf-8"))
        self.assertTrue(m.samples("http_requests_total"))

    def test_no_accept_encoding_is_plain(self):
        for path in ("/data.json", "/big.txt"):
            with self.subTest(path=path):
                status, headers, body = self.srv.get(path)  # http.client sends Accept-Encoding: identity
                self.assertEqual(status, 200)
                self.assertNotIn("content-encoding", headers)
                self.assertEqual(body, self.files[path[1:]])
        raw = build_request("GET", "/data.json", headers=[("Connection", "close")])  # no Accept-Encoding at all
        with self.srv.raw_conn() as conn:
            conn.send(raw)
            r = conn.read_response()
        self.assertNotIn("content-encoding", r.headers)
        self.assertEqual(r.body, self.files["data.json"])
        status, headers, body = self.srv.get("/metrics")
        self.assertNotIn("content-encoding", headers)
        parse_metrics(body.decode("utf-8"))

    def test_gzip_keeps_common_headers(self):
        status, headers, _ = self.srv.get("/data.json", headers={"Accept-Encoding": "gzip"})
        assert_common_headers(self, "gzip /data.json", status, headers)

    def test_gzip_over_http10_keepalive(self):
        # ab -k -H 'Accept-Encoding: gzip': the compressed reply must still be delimited for keep-alive
        with self.srv.raw_conn() as conn:
            for _ in range(2):
                conn.send(build_request("GET", "/data.json", version="HTTP/1.0",
                                        headers=[("Connection", "Keep-Alive"), ("Accept-Encoding", "gzip")]))
                try:
                    r = conn.read_response()
                except NoResponse:
                    self.fail("connection closed instead of a keep-alive gzip reply")
                self.assertEqual(r.status, 200)
                if "keep-alive" not in header_tokens(r.headers.get("connection")):
                    # the server may close instead (length unknown): then it must say so and close
                    self.assertIsNotNone(conn.wait_eof(3))
                    break
                self.assertIn("content-length", r.headers)
                body = gzip.decompress(r.body) if r.headers.get("content-encoding") == "gzip" else r.body
                self.assertEqual(body, self.files["data.json"])


if __name__ == "__main__":
    unittest.main()
