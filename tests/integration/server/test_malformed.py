#!/usr/bin/python3
"""Malformed HTTP and JSON, table-driven, on raw sockets.

One server with PostgreSQL (a fresh database, migrated, seeded `tiny`) so the JSON endpoints of
both apps are real. Every row of the tables says what the client must see; the rules every row
also obeys:

  - never a 5xx;
  - an error is the JSON error document {"errors":{...}}, with one documented exception
    (docs/board-api.md, "Errors common to the board"): a request libh2o cannot parse as HTTP/1 at
    all gets libh2o's fixed `400 Bad Request` in text/plain and the connection closes;
  - a request that never completes (truncated request line, headers or body) gets no response:
    the connection is closed at the request timeout (--keepalive-timeout, 2 s here) or as soon
    as the client closes its side;
  - the server is alive afterwards (GET /health_check) and no row changed.

Already covered elsewhere, not repeated here: board JSON bodies of every write endpoint (wrong
types, huge strings, malformed JSON, invalid UTF-8, 10,000-deep nesting, duplicate keys, NUL
escapes, text/plain / form / multipart / XML content types: test_board_hostile.py), bodies over
1 MiB (413 from Content-Length and chunked: test_core_http.py, test_board_hostile.py), path
traversal (test_core_http.py).
"""

import json
import os
import socket
import threading
import time
import unittest

from pgtest import FreshDatabase, psql, scalar
from sutlab_testlib import (IncompleteResponse, MalformedResponse, NoResponse, RawConn, Server,
                            media_type, migrate_and_seed, release_class, stop_class_server)

REQ_TIMEOUT = 2  # --keepalive-timeout: also the time a client has to send a whole request
LEAKS = ("SELECT", "ERROR:", "/work/", "postgres", "INSERT", "UPDATE ", "DELETE FROM", "libpq", ".c:",
         "jansson", "/tmp/", "/usr/")
TABLES = ("users", "sessions", "stores", "menus", "articles", "comments", "favorites", "follows", "tags")

# A status set meaning "libh2o's own 400: text/plain, connection closed".
H2O_400 = "h2o-400"
# No response; the connection closes (at the request timeout, or at once after the client's FIN).
NO_RESPONSE = "none"


def req(method, path, headers=(), body=b"", version=b"HTTP/1.1", host=True, length=True):
    """Request bytes. headers: [(name, value)] as str or bytes; Content-Length added for a body."""
    out = method.encode() + b" " + (path if isinstance(path, bytes) else path.encode()) + b" " + version + b"\r\n"
    names = set()
    for k, v in ([("Host", "127.0.0.1")] if host else []) + list(headers):
        k = k if isinstance(k, bytes) else k.encode("latin-1")
        v = v if isinstance(v, bytes) else v.encode("latin-1")
        names.add(k.lower())
        out += k + b": " + v + b"\r\n"
    if body and length and b"content-length" not in names and b"transfer-encoding" not in names:
        out += b"Content-Length: %d\r\n" % len(body)
    return out + b"\r\n" + body


def json_req(method, path, body, token=None, ctype="application/json", extra=()):
    headers = [("Content-Type", ctype)] if ctype is not None else []
    if token:
        headers.append(("Authorization", "Token " + token))
    return req(method, path, headers + list(extra), body if isinstance(body, bytes) else body.encode())


def make_session(url, user_id):
    token = os.urandom(32).hex()
    psql(url, "INSERT INTO sessions (token_hash, user_id) VALUES (sha256(decode('%s', 'hex')), %d)" % (token, user_id))
    return token


class Base(unittest.TestCase):
    """A fresh database (migrated, seeded tiny) and one server with both apps."""

    @classmethod
    def setUpClass(cls):
        cls.db = FreshDatabase(prefix="sutlab_malformed")
        cls.url = cls.db.create()
        cls.srv = None
        try:
            migrate_and_seed(cls.url, bcrypt_cost=4, timeout=180)
            cls.token = make_session(cls.url, 1)
            cls.category = int(scalar(cls.url, "SELECT min(id) FROM store_categories"))
            cls.slug = scalar(cls.url, "SELECT slug FROM articles ORDER BY id LIMIT 1")
            cls.srv = Server(extra_args=["--db-url", cls.url, "--keepalive-timeout", str(REQ_TIMEOUT),
                                         "--bcrypt-cost", "4"], workers=1)
            cls.srv.start()
        except BaseException:
            release_class(cls.srv, db=cls.db)
            raise

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, db=cls.db)

    def snapshot(self):
        return {t: scalar(self.url, "SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) FROM %s x" % t)
                for t in TABLES}

    def setUp(self):
        self.before = self.snapshot()

    def tearDown(self):
        self.assertTrue(self.srv.running(), "server died: %s" % self.srv.stderr()[-3000:])
        self.assertEqual(self.srv.get("/health_check")[0], 200)
        self.assertEqual(self.snapshot(), self.before, "a rejected request changed the database")

    # -- one exchange

    def exchange(self, data, shut=False, timeout=REQ_TIMEOUT + 4):
        """Send data on a fresh connection; returns (first response or None, seconds until the
        server closed or answered, bytes after the response)."""
        conn = RawConn(self.srv.port, timeout=timeout)
        t0 = time.monotonic()
        try:
            try:
                conn.send(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered and closed before taking everything (huge requests)
            if shut:
                conn.sock.shutdown(socket.SHUT_WR)
            try:
                r = conn.read_response()
            except (NoResponse, IncompleteResponse):
                return None, time.monotonic() - t0, b""
            except socket.timeout:
                self.fail("no response and no close within %.0f s for %r" % (timeout, data[:120]))
            return r, time.monotonic() - t0, bytes(conn.buf)
        finally:
            conn.close()

    def check(self, name, data, expect, shut=False):
        """expect: a set of statuses (JSON errors for 4xx), H2O_400 or NO_RESPONSE."""
        r, dt, rest = self.exchange(data, shut=shut)
        what = "%s: %r" % (name, data[:160])
        if expect == NO_RESPONSE:
            self.assertIsNone(r, "%s: expected no response, got %r" % (what, r))
            limit = 1.5 if shut else REQ_TIMEOUT + 1.5
            self.assertLess(dt, limit, "%s: connection held %.1f s (request timeout %d s)" % (what, dt, REQ_TIMEOUT))
            return None
        if r is None and expect == H2O_400 and len(data) > 65536:
            # libh2o answered 400 and closed while the client was still sending: the kernel then
            # resets the connection, which may discard the answer before the client reads it
            self.assertLess(dt, 5, "%s: took %.1f s to refuse" % (what, dt))
            return None
        self.assertIsNotNone(r, "%s: connection closed without a response" % what)
        self.assertLess(r.status, 500, "%s -> %r" % (what, r))
        if expect == H2O_400:
            self.assertEqual(r.status, 400, "%s -> %r" % (what, r))
            if media_type(r.headers.get("content-type")) == "text/plain":
                self.assertEqual(r.body, b"Bad Request", what)
                self.assertIn("close", r.headers.get("connection", "").lower(), what)
            else:
                self.assert_json_error(r, what)
            return r
        self.assertIn(r.status, expect, "%s -> %r" % (what, r))
        if r.status >= 400:
            self.assert_json_error(r, what)
        return r

    def assert_json_error(self, r, what):
        self.assertEqual(media_type(r.headers.get("content-type")), "application/json", "%s -> %r" % (what, r))
        doc = json.loads(r.body.decode("utf-8"))
        self.assertIsInstance(doc.get("errors"), dict, "%s -> %r" % (what, r))
        self.assertTrue(doc["errors"], what)
        for field, msgs in doc["errors"].items():
            self.assertTrue(isinstance(msgs, list) and msgs and all(isinstance(m, str) for m in msgs), what)
        text = r.body.decode("utf-8", "replace")
        for leak in LEAKS:
            self.assertNotIn(leak, text, "%s: error body carries %r" % (what, leak))


class MalformedHTTP(Base):
    """The request line, headers and framing: what libh2o's parser and sutlab make of them."""

    def cases(self):
        return self.request_line_cases() + self.header_and_framing_cases()

    def request_line_cases(self):
        return [
            # -- request line
            ("header without colon", b"GET /health_check HTTP/1.1\r\nHost: x\r\nX-No-Colon\r\n\r\n", H2O_400),
            ("space before colon", b"GET /health_check HTTP/1.1\r\nHost : x\r\n\r\n", H2O_400),
            ("NUL in path", b"GET /health\x00check HTTP/1.1\r\nHost: x\r\n\r\n", H2O_400),
            ("NUL in header value", b"GET /health_check HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", H2O_400),
            ("control char in header", b"GET /health_check HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", H2O_400),
            ("DEL in path", b"GET /a\x7fb HTTP/1.1\r\nHost: x\r\n\r\n", H2O_400),
            ("bare CR", b"GET /health_check HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", H2O_400),
            ("space in method", b"GE T /health_check HTTP/1.1\r\nHost: x\r\n\r\n", H2O_400),
            ("invalid method chars", b"G(T /health_check HTTP/1.1\r\nHost: x\r\n\r\n", {405}),
            ("unknown method", b"BREW /health_check HTTP/1.1\r\nHost: x\r\n\r\n", {405}),
            ("unknown method, unknown path", b"BREW /nope HTTP/1.1\r\nHost: x\r\n\r\n", {404, 405}),
            ("HTTP/0.9 request", b"GET /health_check\r\n\r\n", H2O_400),
            ("HTTP/0.9 one line", b"GET /health_check\r\n", H2O_400),
            ("HTTP/2.0 in an HTTP/1 request line", b"GET /health_check HTTP/2.0\r\nHost: x\r\n\r\n", H2O_400),
            ("bad version", b"GET /health_check HTTP/1.x\r\nHost: x\r\n\r\n", H2O_400),
            ("leading empty lines then a request", b"\r\n\r\nGET /health_check HTTP/1.1\r\nHost: x\r\n\r\n", H2O_400),
            ("TLS ClientHello on the plain port", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64,
             H2O_400),
            ("absolute URI", b"GET http://elsewhere.example/health_check HTTP/1.1\r\nHost: x\r\n\r\n", {200, 404}),
            ("asterisk form", b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", {400, 404, 405}),
            ("CONNECT", b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n", {400, 404, 405}),
            ("percent-encoded NUL in path", b"GET /health%00check HTTP/1.1\r\nHost: x\r\n\r\n", {400, 404}),
            ("raw UTF-8 in path", "GET /caf\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n".encode(), {404}),
            ("invalid UTF-8 in path", b"GET /stores/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", {400, 404}),
            # RFC 9112 2.2: a recipient MAY accept a bare LF as the line terminator; libh2o does
            ("bare LF line ends", b"GET /health_check HTTP/1.1\nHost: x\n\n", {200}),
            # libh2o 2.2.5 does not insist on Host in HTTP/1.1 (RFC 9112 3.2 says 400): lenient
            ("HTTP/1.1 without Host", b"GET /health_check HTTP/1.1\r\n\r\n", {200, 400}),
        ]

    def header_and_framing_cases(self):
        echo = [("Content-Type", "application/json")]
        return [
            # -- headers: size and number
            ("header over 64 KiB (under libh2o's ~408 KB limit)",
             req("GET", "/health_check", [("X-Big", "a" * 70000)]), {200}),
            ("header section over libh2o's limit", req("GET", "/health_check", [("X-Big", "a" * 500000)]), H2O_400),
            ("header section of 3 MB", req("GET", "/health_check", [("X-Big", "a" * 3000000)]), H2O_400),
            ("more than 100 headers", req("GET", "/health_check", [("X-H%d" % i, "v") for i in range(120)]), H2O_400),
            # sutlab's 8 KiB target limit comes before libh2o's ~408 KB request head: 414, never 403
            ("request line over 64 KiB", req("GET", "/" + "a" * 70000), {414}),
            ("path of 100,000 bytes", req("GET", "/" + "a" * 100000), {414}),
            ("API path of 9,000 bytes", req("GET", "/api/articles/" + "a" * 9000), {414}),
            ("query over 8 KiB", req("GET", "/api/articles?tag=" + "a" * 9000), {414}),
            # -- Content-Length
            ("negative Content-Length", req("POST", "/rpc/echo", echo + [("Content-Length", "-1")], b"{}"), {400}),
            ("non-numeric Content-Length", req("POST", "/rpc/echo", echo + [("Content-Length", "abc")], b"{}"), {400}),
            ("Content-Length with a sign", req("POST", "/rpc/echo", echo + [("Content-Length", "+2")], b"{}"), {400}),
            ("Content-Length of 2^64+", req("POST", "/rpc/echo", echo + [("Content-Length", "9" * 25)], b"{}"), {400}),
            ("two equal Content-Length headers",
             req("POST", "/rpc/echo", echo + [("Content-Length", "2"), ("Content-Length", "2")], b"{}"), {200, 400}),
            # -- Transfer-Encoding
            ("chunk size not hex", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "chunked")],
                                       b"zz\r\n{}\r\n0\r\n\r\n"), {400}),
            ("negative chunk size", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "chunked")],
                                        b"-2\r\n{}\r\n0\r\n\r\n"), {400}),
            ("chunk size of 2^80", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "chunked")],
                                       b"ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"), {413}),
            ("chunk size of 2^64-1, no data", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "chunked")],
                                                  b"ffffffffffffffff\r\n"), {413}),
            ("chunk shorter than its size", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "chunked")],
                                                b"5\r\n{}\r\n0\r\n\r\n"), {400}),
            ("unknown transfer coding", req("POST", "/rpc/echo", echo + [("Transfer-Encoding", "gzip")], b"{}",
                                            length=False), {400}),
            ("chunked and Content-Length", req("POST", "/rpc/echo", echo + [("Content-Length", "2"),
                                                                            ("Transfer-Encoding", "chunked")],
                                               b"2\r\n{}\r\n0\r\n\r\n"), {400}),
            # -- Expect
            ("unknown expectation", req("POST", "/rpc/echo", echo + [("Expect", "teapot")], b"{}"), {417}),
        ]

    def test_table(self):
        for name, data, expect in self.cases():
            if expect == NO_RESPONSE:
                continue
            with self.subTest(case=name):
                self.check(name, data, expect)
        self.assertEqual(self.srv.get("/health_check")[0], 200)

    def test_truncated_requests_get_no_response_and_are_cut_at_the_timeout(self):
        """Request line, headers or body cut short: no response, closed at the request timeout
        (the client keeping its side open) or at once (the client closing its side)."""
        cases = [
            ("truncated request line", b"GET /health_ch"),
            ("request line without headers' end", b"GET /health_check HTTP/1.1\r\n"),
            ("truncated headers", b"GET /health_check HTTP/1.1\r\nHost: x\r\nX-A: b"),
            ("truncated Content-Length body", req("POST", "/rpc/echo", [("Content-Type", "application/json"),
                                                                         ("Content-Length", "100")], b'{"a":',
                                                  length=False)),
            ("truncated chunked body", req("POST", "/rpc/echo", [("Content-Type", "application/json"),
                                                                  ("Transfer-Encoding", "chunked")], b'5\r\n{"a":')),
            ("truncated board write", json_req("POST", "/api/articles", b'{"article":{"title":"t"', self.token,
                                               extra=[("Content-Length", "5000")])),
            ("truncated store write", json_req("POST", "/stores", b'{"name":"n"', self.token,
                                               extra=[("Content-Length", "5000")])),
        ]
        errors = []

        def run(name, data, shut):
            try:
                self.check(name + (" then FIN" if shut else ""), data, NO_RESPONSE, shut=shut)
            except BaseException as e:  # noqa: B902 - reported below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(n, d, s)) for n, d in cases for s in (False, True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        if errors:
            raise errors[0]

    def test_conflicting_content_length_is_refused(self):
        """Two different Content-Length headers (RFC 9112 6.3: unrecoverable, must be 400 and close).

        Found by this test: libh2o 2.2.5 takes the first value and keeps the connection,
        so the bytes past it were parsed as a second request (request smuggling behind a proxy that
        reads the last Content-Length). sutlab now checks the raw header block (core/rawreq.c)."""
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        data = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Content-Length", "2"),
                                         ("Content-Length", str(2 + len(smuggled)))], b"{}" + smuggled, length=False)
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(data)
            r = conn.read_response()
            self.assertLess(r.status, 500)
            second = None
            try:
                second = conn.read_response()
            except (NoResponse, IncompleteResponse, MalformedResponse, socket.timeout):
                pass
        self.assertIsNone(second, "the bytes past the first Content-Length were served as a request: %r" % second)
        self.assertEqual(r.status, 400, r)


    def test_length_with_chunked_is_refused_and_closes(self):
        """Content-Length and Transfer-Encoding: chunked together (RFC 9112 6.3: "ought to be handled
        as an error"; 6.1: a server that answers it MUST close). libh2o lets chunked win and keeps
        the connection, so a request hidden past the Content-Length would be served next."""
        smuggled = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"
        data = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Content-Length", "2"),
                                         ("Transfer-Encoding", "chunked")], b"2\r\n{}\r\n0\r\n\r\n" + smuggled)
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(data)
            r = conn.read_response()
            self.assertEqual(r.status, 400, r)
            self.assertEqual(json.loads(r.body), {"errors": {"content-length": [
                "Content-Length together with Transfer-Encoding"]}})
            self.assertEqual((r.headers.get("connection") or "").lower(), "close", r)
            self.assertIsNotNone(conn.wait_eof(1.0), "connection kept after an ambiguous framing")

    def test_chunk_declared_over_the_limit_is_413_at_once(self):
        """A chunk whose size line alone declares more than 1 MiB: 413 and close, without waiting for
        the data or the request timeout (libh2o counts only decoded data, so it waited)."""
        head = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")])
        doc = {"errors": {"body": ["request body too large (limit 1 MiB)"]}}
        get = req("GET", "/health_check")
        honest = head + b"2\r\n[]\r\n0\r\n\r\n"
        expect = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked"),
                                           ("Expect", "100-continue")])
        # (name, what is sent, write by write; how many 200s come before the 413; a "100 Continue"
        # may come before the 413 too)
        cases = [
            ("size line with the head", [head + b"ffffffffffffffff\r\n"], 0),
            ("size line after the head", [head, b"ffffffffffffffff\r\n"], 0),
            ("size line trickled", [head, b"fff", b"fff", b"\r\n"], 0),
            ("two chunks adding up to 1 MiB", [head + b"80000\r\n" + b"a" * 0x80000 + b"\r\n", b"80000\r\n"], 0),
            ("second request on a keep-alive connection", [get, head + b"100000\r\n"], 1),
            # pipelined: libh2o holds the next request when the first is answered
            ("pipelined behind a GET", [get + head + b"ffffffffffffffff\r\n"], 1),
            ("pipelined behind a chunked request", [honest + head + b"100000\r\n"], 1),
            ("pipelined behind two", [get + honest + head + b"100000\r\n"], 2),
            ("pipelined, its head cut short", [get + head[:20], head[20:] + b"ffffffffffffffff\r\n"], 1),
            ("pipelined, within the limit until the next write",
             [get + head + b"80000\r\n" + b"a" * 0x80000 + b"\r\n", b"80000\r\n"], 1),
            # Expect: 100-continue: libh2o reads the body with its own callback once that is sent
            ("Expect: 100-continue, size line with the head", [expect + b"ffffffffffffffff\r\n"], 0),
            ("Expect: 100-continue, size line after the 100", [expect, b"ffffffffffffffff\r\n"], 0),
            ("Expect: 100-continue, over the limit on a later write",
             [expect + b"80000\r\n" + b"a" * 0x80000 + b"\r\n", b"80000\r\n"], 0),
            ("Expect: 100-continue, pipelined behind a GET", [get + expect, b"100000\r\n"], 1),
            ("Expect: 100-continue, pipelined with its size line", [get + expect + b"100000\r\n"], 1),
        ]
        for name, parts, answered in cases:
            with self.subTest(case=name):
                conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
                with conn:
                    start = time.monotonic()
                    for p in parts:
                        conn.send(p)
                        time.sleep(0.05)
                    for _ in range(answered):
                        self.assertEqual(conn.read_response().status, 200)
                    r = conn.read_response()
                    if r.status == 100:
                        r = conn.read_response()
                    took = time.monotonic() - start
                    self.assertEqual(r.status, 413, r)
                    self.assertEqual(json.loads(r.body), doc)
                    self.assertEqual(media_type(r.headers.get("content-type")), "application/json")
                    self.assertEqual((r.headers.get("connection") or "").lower(), "close", r)
                    self.assertLess(took, REQ_TIMEOUT / 2, "413 not immediate (%.2f s)" % took)
                    self.assertIsNotNone(conn.wait_eof(1.0), "connection kept after the 413")
        # counted like any response, and the server lives
        self.assertEqual(self.srv.get("/health_check")[0], 200)

    def test_chunked_bodies_within_the_limit_are_served(self):
        """The same watch lets honest chunked bodies through, on one keep-alive connection."""
        head = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")])
        big = b'["' + b"x" * 600000 + b'"]'
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            for body in (b'{"a":1}', big, b"[1,2,3]"):
                chunked = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(body[i:i + 70000]), body[i:i + 70000])
                                   for i in range(0, len(body), 70000)) + b"0\r\n\r\n"
                conn.send(head + chunked)
                r = conn.read_response()
                self.assertEqual(r.status, 200, r)
                self.assertEqual(json.dumps(json.loads(r.body)["echo"], separators=(",", ":")).encode(),
                                 json.dumps(json.loads(body), separators=(",", ":")).encode())

    def test_chunked_bodies_after_100_continue_are_served(self):
        """Expect: 100-continue with a chunked body within the limit, on one keep-alive connection:
        the 100, then the answer, whether the body waits for the 100 (and comes in two writes) or
        comes with the head; a GET after them is answered too."""
        head = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked"),
                                         ("Expect", "100-continue")])
        body = b'["' + b"y" * 300000 + b'"]'
        chunked = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 70000]), body[i:i + 70000])
                           for i in range(0, len(body), 70000)) + b"0\r\n\r\n"
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(head)
            self.assertEqual(conn.read_response().status, 100)
            conn.send(chunked[:100000])
            time.sleep(0.05)
            conn.send(chunked[100000:])
            r = conn.read_response()
            self.assertEqual(r.status, 200, r)
            self.assertEqual(json.loads(r.body)["echo"], json.loads(body))
            conn.send(head + chunked)
            r = conn.read_response()
            if r.status == 100:
                r = conn.read_response()
            self.assertEqual(r.status, 200, r)
            self.assertEqual(json.loads(r.body)["echo"], json.loads(body))
            conn.send(req("GET", "/health_check"))
            self.assertEqual(conn.read_response().status, 200)

    def test_pipelined_chunked_bodies_within_the_limit_are_served(self):
        """Honest chunked requests pipelined in one write, with a GET between them and one split
        across two writes: every one answered, in order, on the one connection."""
        head = req("POST", "/rpc/echo", [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")])
        big = b'["' + b"y" * 300000 + b'"]'
        small = head + b"7\r\n{\"a\":1}\r\n0\r\n\r\n"
        large = head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(big), big)
        get = req("GET", "/health_check")
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(small + get + large[:len(large) // 2])
            time.sleep(0.05)
            conn.send(large[len(large) // 2:] + small)
            echoes = []
            for expected in ("echo", "ok", "echo", "echo"):
                r = conn.read_response()
                self.assertEqual(r.status, 200, r)
                if expected == "echo":
                    echoes.append(json.loads(r.body)["echo"])
                else:
                    self.assertEqual(r.body, b"ok")
        self.assertEqual(echoes, [{"a": 1}, json.loads(big), {"a": 1}])

    def test_over_long_path_is_414_json(self):
        """A 100,000-byte path is 414 with the JSON error, not the file handler's 403."""
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(req("GET", "/" + "a" * 100000))
            r = conn.read_response()
        self.assertEqual(r.status, 414, r)
        self.assertEqual(json.loads(r.body), {"errors": {"path": ["is too long (maximum is 8192 bytes)"]}})
        # 8,192 bytes of target is still served (404: no such file), one more is not
        for n, status in ((8192, 404), (8193, 414)):
            conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
            with conn:
                conn.send(req("GET", "/" + "b" * (n - 1)))
                self.assertEqual(conn.read_response().status, status, n)

    def test_pipelined_garbage_after_a_good_request(self):
        """A good request then garbage on the same connection: the first is answered, the garbage
        gets libh2o's 400 and the connection closes."""
        conn = RawConn(self.srv.port, timeout=REQ_TIMEOUT + 3)
        with conn:
            conn.send(req("GET", "/health_check") + b"\x00\x01garbage\r\n\r\n")
            self.assertEqual(conn.read_response().status, 200)
            r = conn.read_response()
            self.assertEqual(r.status, 400)
            self.assertIsNotNone(conn.wait_eof(REQ_TIMEOUT + 2), "connection not closed after the 400")


class MalformedJSON(Base):
    """Bodies and parameters on the delivery and RPC endpoints (the board's are in
    test_board_hostile.py), numbers out of range, and content types."""

    def bodies(self):
        """(name, body, statuses of POST /stores, statuses of POST /rpc/echo).

        /stores reads an object with JSON_REJECT_DUPLICATES (an integer beyond 64 bits is a
        parse error: 400); /rpc/echo takes any value and reads big integers as reals (only
        beyond a double's range, ~1e308, is it a 400)."""
        cat = self.category

        def store(**kw):
            d = {"name": "Malformed Test", "phone": "1", "address": "A 1", "categoryId": cat}
            d.update(kw)
            return json.dumps(d).encode()

        def store_raw(cat_text, name=b"Malformed Test"):
            return b'{"name":"' + name + b'","phone":"1","address":"A 1","categoryId":' + cat_text.encode() + b"}"

        return syntax_bodies(store, store_raw) + value_bodies(store, store_raw, cat)

    def test_store_bodies(self):
        for name, body, expect, _ in self.bodies():
            with self.subTest(case=name):
                r = self.check(name, json_req("POST", "/stores", body, self.token), expect)
                if r.status == 201:
                    psql(self.url, "DELETE FROM stores WHERE id = %d" % json.loads(r.body)["id"])

    def test_rpc_echo_bodies(self):
        for name, body, _, expect in self.bodies():
            with self.subTest(case=name):
                r = self.check(name, json_req("POST", "/rpc/echo", body), expect)
                if r.status == 200:
                    doc = json.loads(r.body)  # the echo of an accepted body is JSON
                    self.assertIn("echo", doc)

    def test_content_types(self):
        cat = self.category
        body = json.dumps({"name": "CT Test", "phone": "1", "address": "A", "categoryId": cat}).encode()
        latin1 = ('{"name":"Caf\u00e9","phone":"1","address":"A","categoryId":%d}' % cat).encode("latin-1")
        cases = [
            ("text/plain", body, {415}),
            ("multipart/form-data; boundary=xyz", body, {415}),
            ("application/x-www-form-urlencoded", b"name=x&phone=1", {415}),
            ("application/jsonx", body, {415}),
            ("application/json-patch+json", body, {415}),
            ("application/", body, {415}),
            ("", body, {415}),
            ("json", body, {415}),
            ("application/json\x7f", body, H2O_400),  # DEL is a control: not HTTP
            ("APPLICATION/JSON", body, {201}),
            ("application/json; charset=utf-8", body, {201}),
            ("application/json;charset=UTF-8", body, {201}),
            # the charset parameter is not honoured: bodies are UTF-8, a latin-1 é is invalid UTF-8
            ("application/json; charset=latin1", latin1, {400}),
            ("application/json; charset=latin1", body, {201}),
            (None, body, {201}),  # no Content-Type: read as JSON
        ]
        for ctype, data, expect in cases:
            with self.subTest(ctype=ctype, body=data[:40]):
                raw = json_req("POST", "/stores", data, self.token, ctype=ctype)
                r = self.check("Content-Type %r" % ctype, raw, expect)
                if r is not None and r.status == 201:
                    psql(self.url, "DELETE FROM stores WHERE id = %d" % json.loads(r.body)["id"])
        for ctype, data, expect in cases[:8]:
            with self.subTest(endpoint="/api/articles", ctype=ctype):
                doc = b'{"article":{"title":"t","description":"d","body":"b"}}'
                self.check("articles %r" % ctype, json_req("POST", "/api/articles", doc, self.token, ctype=ctype),
                           {400, 415})

    def test_query_parameters_out_of_range(self):
        cases = [
            ("/stores?categoryId=%d" % 2 ** 64, {422}),
            ("/stores?categoryId=%d" % 2 ** 63, {422}),
            ("/stores?categoryId=%d" % (2 ** 63 - 1), {200}),
            ("/stores?categoryId=-0", {422}),
            ("/stores?categoryId=0", {422}),
            ("/stores?categoryId=1e3", {422}),
            ("/stores?categoryId=1.0", {422}),
            ("/stores?categoryId=0x10", {422}),
            ("/stores?categoryId=+1", {422}),
            ("/stores?categoryId=%2B1", {422}),
            ("/stores?categoryId=%201", {422}),
            ("/stores?categoryId=" + "9" * 400, {422}),
            ("/stores?categoryId=%00", {400}),
            ("/stores?categoryId=%zz", {400}),
            ("/stores?categoryId=%", {400}),
            ("/stores?categoryId=", {422}),
            ("/stores?categoryId", {422}),
            ("/stores", {422}),
            ("/stores?categoryId=1&address=%FF%FE", {422}),
            ("/stores?categoryId=1&address=" + "a" * 201, {422}),
            ("/stores?categoryId=1&address=" + "a" * 1025, {400}),
            ("/stores?categoryId=1&categoryId=x", {200}),  # the first one counts
            ("/api/articles?limit=%d" % 2 ** 64, {422}),
            ("/api/articles?limit=-0", {422}),
            ("/api/articles?limit=0", {422}),
            ("/api/articles?limit=101", {422}),
            ("/api/articles?limit=1e2", {422}),
            ("/api/articles?offset=%d" % 2 ** 64, {422}),
            ("/api/articles?offset=1e400", {422}),
            ("/api/articles?offset=-1", {422}),
            ("/api/articles?limit=%00", {400}),
            ("/stores/%d" % 2 ** 64, {404}),
            ("/stores/%d" % 2 ** 63, {404}),
            ("/stores/-0", {404}),
            ("/stores/1e3", {404}),
            ("/stores/0x1", {404}),
        ]
        for path, expect in cases:
            with self.subTest(path=path[:100]):
                self.check("GET " + path[:100], req("GET", path), expect)
        for cid in (str(2 ** 64), str(2 ** 63), "-0", "1e3", "0"):
            with self.subTest(comment=cid):
                self.check("DELETE comment " + cid, req("DELETE", "/api/articles/%s/comments/%s" % (self.slug, cid),
                                                        [("Authorization", "Token " + self.token)]), {404, 422})
            with self.subTest(patch=cid):
                self.check("PATCH store " + cid, req("PATCH", "/stores/%s/opened" % cid,
                                                     [("Authorization", "Token " + self.token)]), {404})


def syntax_bodies(store, store_raw):
    """Bodies that are no JSON (truncated, extended syntax), nest 10,000 deep, or carry NUL or
    bad UTF-8: a 400 from both endpoints. store(**fields) and store_raw(categoryId text, name
    bytes) make a /stores body."""
    deep = 10000
    bad = {400}
    return [
        # -- truncated / not JSON
        ("truncated object", b'{"name":"x","phone":', bad, bad),
        ("truncated string", b'{"name":"x', bad, bad),
        ("truncated escape", b'{"name":"\\u00', bad, bad),
        ("empty body", b"", bad, bad),
        ("only whitespace", b"   \r\n\t ", bad, bad),
        ("trailing garbage", store() + b"garbage", bad, bad),
        ("two documents", store() + store(), bad, bad),
        ("single quotes", b"{'name':'x'}", bad, bad),
        ("comments", b'{/* c */"name":"x"}', bad, bad),
        ("trailing comma", b'{"name":"x",}', bad, bad),
        ("NaN", store_raw("NaN"), bad, bad),
        ("Infinity", store_raw("Infinity"), bad, bad),
        ("hex number", store_raw("0x10"), bad, bad),
        ("leading zero", store_raw("01"), bad, bad),
        ("leading plus", store_raw("+1"), bad, bad),
        # -- nesting
        ("arrays nested 10,000 deep", b"[" * deep + b"]" * deep, bad, bad),
        ("objects nested 10,000 deep", b'{"a":' * deep + b"1" + b"}" * deep, bad, bad),
        ("10,000 unclosed brackets", b"[" * deep, bad, bad),
        ("categoryId nested 10,000 deep", store_raw("[" * deep + "1" + "]" * deep), bad, bad),
        # -- NUL and UTF-8
        ("raw NUL in a string", store_raw("1", b"Mal\x00formed"), bad, bad),
        ("raw NUL after the document", store() + b"\x00", bad, bad),
        ("NUL escape in a string", store(name="a\u0000b"), bad, bad),
        ("invalid UTF-8 (0xff)", store_raw("1", b"Mal\xffformed"), bad, bad),
        ("overlong UTF-8", store_raw("1", b"\xc0\xaf"), bad, bad),
        ("UTF-8 surrogate", store_raw("1", b"\xed\xa0\x80"), bad, bad),
        ("truncated UTF-8 sequence", store_raw("1", b"\xe2\x82"), bad, bad),
        ("escaped lone surrogate", store_raw("1", b"\\ud800"), bad, bad),
        ("UTF-16 body", json.dumps({"name": "x"}).encode("utf-16"), bad, bad),
        ("UTF-8 BOM", b"\xef\xbb\xbf" + store(), bad, bad),
    ]


def value_bodies(store, store_raw, cat):
    """JSON bodies whose categoryId is out of range or no integer, or that repeat a key (see
    MalformedJSON.bodies for the statuses)."""
    bad = {400}
    return [
        # -- numbers out of range
        ("categoryId 1e400", store_raw("1e400"), bad, bad),
        ("categoryId -1e400", store_raw("-1e400"), bad, bad),
        ("categoryId 2^64", store_raw(str(2 ** 64)), bad, {200}),
        ("categoryId 2^63", store_raw(str(2 ** 63)), bad, {200}),
        ("categoryId as a 400-digit integer", store_raw("9" * 400), bad, bad),
        ("categoryId 2^63-1 (no such category)", store_raw(str(2 ** 63 - 1)), {422}, {200}),
        ("categoryId -2^63", store_raw(str(-2 ** 63)), {422}, {200}),
        ("categoryId -0", store_raw("-0"), {422}, {200}),
        ("categoryId 0", store_raw("0"), {422}, {200}),
        ("categoryId 1.0", store_raw("1.0"), {422}, {200}),
        ("categoryId 1e0", store_raw("1e0"), {422}, {200}),
        ("categoryId 5e-324", store_raw("5e-324"), {422}, {200}),
        ("categoryId 1e-400 (underflow)", store_raw("1e-400"), {400, 422}, {200, 400}),
        ("categoryId a string", store_raw('"1"'), {422}, {200}),
        # -- duplicate keys
        ("duplicate key", store_raw("%d, \"categoryId\": %d" % (cat, cat)), bad, bad),
        ("duplicate key in the wrapper", b'{"store":' + store() + b',"store":' + store() + b"}", bad, bad),
        ("duplicate key, other case (a different key)", store_raw("%d, \"CATEGORYID\": %d" % (cat, cat)),
         {201}, {200}),
    ]

if __name__ == "__main__":
    unittest.main()
