#!/usr/bin/python3
"""Two workers doing everything at once (the TSan run's main course).

One server with --workers 2, PostgreSQL, the Redis cache, the offload pool (bcrypt) and gzip; for
a few seconds, parallel clients on keep-alive connections (spread over both workers by
SO_REUSEPORT) register and log in (bcrypt on the offload threads, completions back through the
workers' queues), write and read articles, comments and favorites, open/close a store and read
its cached listing, echo JSON, fetch static files gzipped, and scrape /metrics (which sums every
worker's counters while they change). Then SIGTERM while the load still runs.

Checked: no 5xx, every answer as documented, the metrics consistent with what was sent, a clean
exit 0 and — in the ThreadSanitizer build (infra/lab test's build-tsan, TSAN_OPTIONS
halt_on_error=1) — no race report on stderr (Server.finish fails on one).
"""

import json
import os
import subprocess
import sys
import threading
import time
import unittest
import uuid

from pgtest import FreshDatabase, scalar
from sutlab_testlib import (IncompleteResponse, NoResponse, RawConn, Server, build_request,
                            migrate_and_seed, parse_metrics, release_class, stop_class_server)

DURATION = float(os.environ.get("SUTLAB_MULTIWORKER_SECONDS", "6"))


def redis_url(db):
    port = os.environ.get("SUTLAB_TEST_REDIS_PORT")
    if not port:
        raise unittest.SkipTest("SUTLAB_TEST_REDIS_PORT is not set "
                                "(run under loadscripts/sutlab_lab/services/with-services)")
    return "redis://127.0.0.1:%s/%d" % (port, db)


class Client:
    """A keep-alive connection that reconnects when the server closes it."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def call(self, method, path, body=None, token=None, headers=()):
        hdrs = list(headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.append(("Content-Type", "application/json"))
        if token:
            hdrs.append(("Authorization", "Token " + token))
        for attempt in range(2):
            if self.conn is None:
                self.conn = RawConn(self.port, timeout=60)
            try:
                self.conn.send(build_request(method, path, headers=hdrs, body=data))
                r = self.conn.read_response(head=method == "HEAD")
            except (NoResponse, BrokenPipeError, ConnectionResetError):
                self.close()  # a keep-alive connection the server closed between requests
                if attempt == 1:
                    raise
                continue
            if "close" in r.headers.get("connection", "").lower():
                self.close()
            return r
        raise AssertionError("unreachable")

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class TwoWorkers:
    MODE = "async"
    REDIS_DB = 11

    @classmethod
    def setUpClass(cls):
        cls.db = FreshDatabase(prefix="sutlab_mw")
        cls.url = cls.db.create()
        cls.srv = None
        try:
            migrate_and_seed(cls.url, bcrypt_cost=4)
            subprocess.run(["redis-cli", "-p", redis_url(cls.REDIS_DB).split(":")[2].split("/")[0], "-n",
                            str(cls.REDIS_DB), "FLUSHDB"], stdout=subprocess.DEVNULL, check=True, timeout=10)
            cls.srv = Server(extra_args=["--db-url", cls.url, "--db-mode", cls.MODE, "--redis-url",
                                         redis_url(cls.REDIS_DB), "--redis-cache", "--bcrypt-cost", "4",
                                         "--offload-threads", "2", "--gzip", "--db-timeout", "30000",
                                         "--drain-timeout", "20"],
                             workers=2, start_timeout=60)
            cls.srv.start()
        except BaseException:
            release_class(cls.srv, db=cls.db)
            raise

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.srv, db=cls.db, timeout=60)

    def run_load(self, duration, stop_server_at=None):
        """Runs every client kind in parallel for `duration` s; returns {kind: requests}.

        stop_server_at: seconds after which SIGTERM is sent (then connection errors are allowed)."""
        sid, owner, cat = (int(x) for x in scalar(self.url, "SELECT id || '|' || owner_id || '|' || category_id"
                                                             " FROM stores ORDER BY id LIMIT 1").split("|"))
        load = MixedLoad(self.srv.port, store_id=sid, category=cat,
                         owner_email=scalar(self.url, "SELECT email FROM users WHERE id = %d" % owner),
                         slug=scalar(self.url, "SELECT slug FROM articles ORDER BY id LIMIT 1"))
        load.start()
        t0 = time.monotonic()
        if stop_server_at is not None:
            time.sleep(stop_server_at)
            load.stopping.set()
            self.srv.proc.send_signal(15)
        time.sleep(max(0.0, duration - (time.monotonic() - t0)))
        load.stop()
        self.assertFalse(any(t.is_alive() for t in load.threads), "clients still running 120 s after the end")
        self.assertEqual(load.errors, [], "client errors (connection errors count only before a SIGTERM)")
        self.assertEqual(load.failures[:10], [], "%d unexpected answers" % len(load.failures))
        return load.counts

    def test_everything_at_once(self):
        before = self.srv.metrics().total("http_requests_total")
        counts = self.run_load(DURATION)
        total = sum(counts.values())
        sys.stderr.write("[multiworker %s] %d requests in %.0f s: %s\n" % (self.MODE, total, DURATION,
                                                                          json.dumps(counts, sort_keys=True)))
        for kind in ("register", "login", "create-article", "listing", "metrics", "echo", "static", "patch-store"):
            self.assertGreater(counts.get(kind, 0), 0, "no %s request completed" % kind)
        # every request is counted once, whichever worker served it (the last scrape may miss
        # requests still being logged: allow the final in-flight ones)
        m = self.srv.metrics()
        counted = m.total("http_requests_total") - before
        self.assertGreaterEqual(counted, total - 20, "metrics counted %d of %d requests" % (counted, total))
        self.assertLessEqual(counted, total + 5)
        per_worker = m.samples("event_loop_lag_seconds")
        self.assertEqual(len(per_worker), 2, per_worker)
        self.assertEqual(self.srv.get("/readyz")[0], 200)


class TwoWorkersAsync(TwoWorkers, unittest.TestCase):
    MODE = "async"
    REDIS_DB = 11


class TwoWorkersSync(TwoWorkers, unittest.TestCase):
    MODE = "sync"
    REDIS_DB = 12


class StopUnderLoad(TwoWorkers, unittest.TestCase):
    """SIGTERM while every kind of request is in flight on both workers: a clean exit 0 (checked
    by Server.finish), no answer other than the documented ones before the stop."""
    REDIS_DB = 13

    def test_everything_at_once(self):
        counts = self.run_load(DURATION, stop_server_at=DURATION / 2)
        self.assertGreater(sum(counts.values()), 0)
        rc = self.srv.stop(timeout=60)
        self.assertEqual(rc, 0, self.srv.stderr()[-3000:])
        report = self.srv.sanitizer_report()
        self.assertIsNone(report, report)


class MixedLoad:
    """run_load's clients, one thread each: two registrars, an author, a store flipper, a /metrics
    scraper and four readers, each on its own keep-alive connection until stop(). Every answer is
    counted by kind in counts; one with a status its kind does not allow goes to failures; a client
    that died goes to errors (a connection error only before the stopping event)."""

    def __init__(self, port, store_id, category, owner_email, slug):
        self.port = port
        self.store_id, self.category, self.owner_email, self.slug = store_id, category, owner_email, slug
        self.stop_event = threading.Event()
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = []
        self.errors = []
        kinds = [(self.registrar,), (self.registrar,), (self.author,), (self.store_flipper,), (self.scraper,)]
        kinds += [(self.reader, k) for k in range(4)]
        self.threads = [threading.Thread(target=self.wrap, args=kind, daemon=True) for kind in kinds]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join(120)

    def wrap(self, fn, *args):
        c = Client(self.port)
        try:
            fn(c, *args)
        except (OSError, NoResponse, IncompleteResponse) as e:
            if not self.stopping.is_set():
                self.errors.append("%s: %r" % (fn.__name__, e))
        except BaseException as e:  # noqa: B902 - reported by run_load
            self.errors.append("%s: %r" % (fn.__name__, e))
        finally:
            c.close()

    def expect(self, kind, r, statuses):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
        if r.status not in statuses:
            self.failures.append("%s: %d %r" % (kind, r.status, r.body[:200]))

    def login_owner(self, c):
        r = c.call("POST", "/api/users/login", {"user": {"email": self.owner_email, "password": "password"}})
        self.expect("login", r, (200,))
        return json.loads(r.body)["user"]["token"]

    def registrar(self, c):
        expect = self.expect
        while not self.stop_event.is_set():
            name = "mw" + uuid.uuid4().hex[:10]
            r = c.call("POST", "/api/users", {"user": {"username": name, "email": name + "@x.org",
                                                       "password": "pw-" + name}})
            expect("register", r, (201,))
            r = c.call("POST", "/api/users/login", {"user": {"email": name + "@x.org", "password": "pw-" + name}})
            expect("login", r, (200,))
            if r.status == 200:
                tok = json.loads(r.body)["user"]["token"]
                expect("put-user", c.call("PUT", "/api/user", {"user": {"password": "new-" + name}}, token=tok),
                       (200,))
                expect("logout", c.call("POST", "/api/users/logout", token=tok), (204,))

    def author(self, c):
        expect = self.expect
        tok = self.login_owner(c)
        i = 0
        while not self.stop_event.is_set():
            i += 1
            r = c.call("POST", "/api/articles", {"article": {"title": "MW %d %s" % (i, uuid.uuid4().hex[:6]),
                                                             "description": "d", "body": "b" * 200,
                                                             "tagList": ["mw", "t%d" % (i % 5)]}}, token=tok)
            expect("create-article", r, (201,))
            if r.status != 201:
                continue
            s = json.loads(r.body)["article"]["slug"]
            expect("favorite", c.call("POST", "/api/articles/%s/favorite" % s, token=tok), (200,))
            expect("comment", c.call("POST", "/api/articles/%s/comments" % s, {"comment": {"body": "c"}},
                                     token=tok), (201,))
            expect("list", c.call("GET", "/api/articles?tag=mw&limit=5", token=tok), (200,))
            expect("feed", c.call("GET", "/api/articles/feed", token=tok), (200,))
            if i % 3 == 0:
                expect("delete-article", c.call("DELETE", "/api/articles/" + s, token=tok), (204,))

    def store_flipper(self, c):
        tok = self.login_owner(c)
        i = 0
        while not self.stop_event.is_set():
            i += 1
            state = "opened" if i % 2 else "closed"
            self.expect("patch-store", c.call("PATCH", "/stores/%d/%s" % (self.store_id, state), token=tok), (200,))
            self.expect("listing", c.call("GET", "/stores?categoryId=%d" % self.category), (200,))

    def reader(self, c, k):
        expect = self.expect
        i = 0
        while not self.stop_event.is_set():
            i += 1
            expect("listing", c.call("GET", "/stores?categoryId=%d" % (1 + (i + k) % 5)), (200,))
            expect("store", c.call("GET", "/stores/%d" % (1 + i % 20)), (200, 404))
            expect("article", c.call("GET", "/api/articles/" + self.slug), (200,))
            expect("static", c.call("GET", "/status.txt", headers=[("Accept-Encoding", "gzip;q=0.9, br;q=0")]),
                   (200,))
            expect("echo", c.call("POST", "/rpc/echo", {"k": k, "i": i, "s": "x" * 300}), (200,))
            expect("tags", c.call("GET", "/api/tags"), (200,))
            expect("health", c.call("GET", "/health_check"), (200,))
            expect("readyz", c.call("GET", "/readyz"), (200,))

    def scraper(self, c):
        while not self.stop_event.is_set():
            r = c.call("GET", "/metrics")
            self.expect("metrics", r, (200,))
            if r.status == 200:
                try:
                    parse_metrics(r.body.decode())
                except AssertionError as e:
                    self.failures.append("metrics exposition: %s" % e)
            time.sleep(0.02)


if __name__ == "__main__":
    unittest.main()
