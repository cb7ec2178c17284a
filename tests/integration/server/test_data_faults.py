#!/usr/bin/python3
"""Integration tests: the delivery app while PostgreSQL or Redis fails, and after they return.

Run under loadscripts/sutlab_lab/services/with-services. These tests stop, pause and restart the harness's own
PostgreSQL (pg_ctl) and Redis (redis-cli shutdown / SIGSTOP / DEBUG SLEEP); every one of them puts
the service back (try/finally), on the same port, before it ends.

Expected behaviour (README.md: errors, /readyz, --db-timeout): PostgreSQL unavailable -> 503 with Retry-After, within
--db-timeout, never a hang; /health_check unaffected; /readyz 503 with "db":"down"; recovery
without restarting sutlab. Redis down or slow -> the listing still 200 from PostgreSQL
(X-Cache: BYPASS), counted in cache_requests_total{result="error"}, /readyz 200 with "redis":"down"
(the instance still serves), caching resumes afterwards, and a
write made meanwhile is never hidden by a stale entry.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import unittest

import psutil

from pgtest import PSQL, psql, scalar
from test_delivery import (CACHE_KEY, Env, assert_error, auth, db_categories, db_listing,
                           json_headers, make_session, redis_cli, redis_port, scrape)

DB_TIMEOUT_MS = 1000
CACHE_TIMEOUT_MS = 100
CLIENT_TIMEOUT = 5.0
# A query against a dead or silent PostgreSQL must fail within --db-timeout (plus the pool's own
# grace and scheduling slack); a Redis problem must cost at most --cache-timeout plus slack.
PG_FAIL_WITHIN = DB_TIMEOUT_MS / 1000.0 + 1.5
REDIS_SLOW_WITHIN = 1.0
RECOVERY_WITHIN = 10.0


# ----------------------------------------------------------------------------------------------
# Controlling the harness's services


def _env(name):
    v = os.environ.get(name)
    if not v:
        raise unittest.SkipTest("%s is not set (run under loadscripts/sutlab_lab/services/with-services)" % name)
    return v


def pg_ctl(*args, timeout=60):
    cmd = [_env("SUTLAB_TEST_PG_CTL")] + list(args)
    user = os.environ.get("SUTLAB_TEST_PG_USER")
    if os.geteuid() == 0 and user and user != "root":
        cmd = ["runuser", "-u", user, "--"] + cmd
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError("%s failed (%d): %s %s" % (" ".join(cmd), proc.returncode, proc.stdout, proc.stderr))


def pg_stop():
    pg_ctl("stop", "-D", _env("SUTLAB_TEST_PG_DATA"), "-m", "fast", "-w")


def pg_start():
    pg_ctl("start", "-D", _env("SUTLAB_TEST_PG_DATA"), "-l", _env("SUTLAB_TEST_PG_LOG"), "-w")


@contextlib.contextmanager
def pg_stopped():
    _env("SUTLAB_TEST_PG_DATA")
    pg_stop()
    try:
        yield
    finally:
        pg_start()


def redis_dir():
    return os.path.join(_env("SUTLAB_TEST_DIR"), "redis")


def redis_pid():
    """The pid of the harness's redis-server (from its pid file, checked against /proc)."""
    with open(os.path.join(redis_dir(), "redis.pid")) as f:
        pid = int(f.read().strip())
    cmdline = " ".join(psutil.Process(pid).cmdline())
    if "redis-server" not in cmdline or (":%d" % redis_port()) not in cmdline:
        raise AssertionError("pid %d is not our redis-server: %r" % (pid, cmdline))
    return pid


def redis_ping(timeout=1.0):
    try:
        with socket.create_connection(("127.0.0.1", redis_port()), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def redis_stop():
    pid = redis_pid()
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(redis_port()), "shutdown", "nosave"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists("/proc/%d" % pid):
        time.sleep(0.02)
    if os.path.exists("/proc/%d" % pid):
        raise AssertionError("redis-server %d did not stop" % pid)


def redis_start():
    """The same command line as loadscripts/sutlab_lab/services/with-services (infra/lib/common.sh redis_start)."""
    d = redis_dir()
    subprocess.run(["redis-server", "--port", str(redis_port()), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--daemonize", "yes", "--pidfile", os.path.join(d, "redis.pid"),
                    "--logfile", os.path.join(d, "redis.log"), "--dir", d],
                   stdout=subprocess.DEVNULL, check=True, timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if redis_ping():
            return
        time.sleep(0.05)
    raise AssertionError("redis-server did not come back on port %d" % redis_port())


@contextlib.contextmanager
def redis_stopped():
    redis_stop()
    try:
        yield
    finally:
        redis_start()


@contextlib.contextmanager
def redis_paused():
    pid = redis_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


# ----------------------------------------------------------------------------------------------


class FaultCase(unittest.TestCase):
    MODE = "async"
    REDIS_DB = 10
    EXTRA = ()

    def start_env(self, **kw):
        env = Env(self.REDIS_DB, mode=self.MODE, cache=True, ttl=60,
                  extra=["--db-timeout", str(DB_TIMEOUT_MS), "--cache-timeout", str(CACHE_TIMEOUT_MS)]
                  + list(self.EXTRA), **kw)
        self.addCleanup(env.finish)
        env.start()
        return env

    def timed(self, env, method, path, body=None, headers=None):
        """(status, headers, body, seconds); a hang past CLIENT_TIMEOUT fails the test."""
        t0 = time.monotonic()
        try:
            status, h, b = env.req(method, path, body=body, headers=headers, timeout=CLIENT_TIMEOUT)
        except (OSError, Exception) as e:  # socket.timeout, reset, http.client errors
            self.fail("%s %s: no response within %.0f s (%r)" % (method, path, time.monotonic() - t0, e))
        return status, h, b, time.monotonic() - t0

    def poll(self, what, fn, within=RECOVERY_WITHIN, interval=0.1):
        """Calls fn() until it returns a true value; returns it. Fails after `within` s."""
        deadline = time.monotonic() + within
        last = None
        while True:
            try:
                last = fn()
                if last and last[0]:
                    return last
            except (OSError, ValueError) as e:
                last = (False, repr(e))
            if time.monotonic() >= deadline:
                self.fail("%s: not within %.0f s; last: %r" % (what, within, last))
            time.sleep(interval)

    def store_in(self, env, category):
        sid, owner = (int(x) for x in scalar(env.url, "SELECT id || '|' || owner_id FROM stores WHERE"
                                                      " category_id = %d ORDER BY id LIMIT 1" % category).split("|"))
        return sid, owner

    def fill(self, env, category):
        """Listing of `category` cached: MISS then HIT. Returns the HIT body."""
        r1, r2 = env.listing(category), env.listing(category)
        self.assertEqual(r1[0], 200, r1)
        self.assertEqual([r1[1].get("x-cache"), r2[1].get("x-cache")], ["MISS", "HIT"])
        self.assertEqual(json.loads(r2[2]), db_listing(env.url, category))
        return r2[2]

    def assert_503(self, resp, what):
        status, headers, body, secs = resp
        assert_error(self, (status, headers, body), 503, what=what)
        self.assertIn("retry-after", headers, "%s: 503 without Retry-After: %r" % (what, headers))
        self.assertTrue(headers["retry-after"].strip().isdigit(), headers["retry-after"])
        self.assertLess(secs, PG_FAIL_WITHIN, "%s took %.2f s with --db-timeout %d" % (what, secs, DB_TIMEOUT_MS))


# ----------------------------------------------------------------------------------------------
# PostgreSQL


class PgFaults:
    MODE = "async"
    # the article index asks the planner too: its estimate fails like any query
    EXTRA = ("--count-pagination", "estimate")

    def test_pg_stopped_then_back(self):
        env = self.start_env()
        cat_cached, cat_other = 1, 2
        cached_body = self.fill(env, cat_cached)
        sid, owner = self.store_in(env, cat_cached)
        token = make_session(env.url, owner)
        m0 = scrape(env)
        with pg_stopped():
            # /readyz notices by itself (no other request has touched the database yet)
            def readyz_down():
                s, h, b, _ = self.timed(env, "GET", "/readyz")
                return (s == 503 and json.loads(b).get("db") == "down", s, b)
            with self.subTest("/readyz notices a stopped PostgreSQL before any other request does"):
                self.poll("/readyz 503 with db down after PostgreSQL stopped", readyz_down, within=3)
            create = {"name": "During outage", "phone": "1", "address": "A", "categoryId": cat_cached}
            for attempt in range(2):
                for method, path, body, headers in (
                        ("GET", "/stores/%d" % sid, None, None),
                        ("GET", "/stores/categories", None, None),
                        ("GET", "/stores?categoryId=%d" % cat_other, None, None),
                        ("PATCH", "/stores/%d/closed" % sid, None, auth(token)),
                        ("POST", "/stores", json.dumps(create), json_headers(token)),
                        ("GET", "/api/articles?limit=1", None, None),
                        ("GET", "/api/articles?limit=1&tag=postgres", None, None)):
                    self.assert_503(self.timed(env, method, path, body, headers),
                                    "%s %s with PostgreSQL stopped (attempt %d)" % (method, path, attempt + 1))
            s, _, b, secs = self.timed(env, "GET", "/health_check")
            self.assertEqual((s, b), (200, b"ok"))
            s, h, b, _ = self.timed(env, "GET", "/readyz")
            self.assertEqual(s, 503, b)
            self.assertEqual(json.loads(b), {"db": "down", "redis": "ok"})
            # the cached listing does not need PostgreSQL
            s, h, b, secs = self.timed(env, "GET", "/stores?categoryId=%d" % cat_cached)
            self.assertEqual((s, h.get("x-cache")), (200, "HIT"), b[:200])
            self.assertEqual(b, cached_body)
            m1 = scrape(env)
            self.assertGreaterEqual(m1.total("db_errors_total") - m0.total("db_errors_total"), 1)
        # back: without restarting sutlab
        def detail_ok():
            s, _, b, _ = self.timed(env, "GET", "/stores/%d" % sid)
            return (s == 200, s, b[:120])
        self.poll("GET /stores/%d 200 after PostgreSQL restarted" % sid, detail_ok)
        s, _, b, _ = self.timed(env, "GET", "/stores/categories")
        self.assertEqual(s, 200)
        self.assertEqual(json.loads(b), db_categories(env.url))
        s, h, b, _ = self.timed(env, "GET", "/stores?categoryId=%d" % cat_other)
        self.assertEqual((s, h.get("x-cache")), (200, "MISS"))
        self.assertEqual(json.loads(b), db_listing(env.url, cat_other))
        s, _, b, _ = self.timed(env, "PATCH", "/stores/%d/closed" % sid, headers=auth(token))
        self.assertEqual(s, 200, b)
        self.assertEqual(scalar(env.url, "SELECT open_status FROM stores WHERE id = %d" % sid), "CLOSED")
        self.poll("/readyz 200", lambda: (self.timed(env, "GET", "/readyz")[0] == 200,))
        self.assertEqual(scalar(env.url, "SELECT count(*) FROM stores WHERE name = 'During outage'"), "0")
        s, h, b, _ = self.timed(env, "GET", "/api/articles?limit=1")
        self.assertEqual((s, h.get("x-total-count-kind"), json.loads(b)["articlesCount"]), (200, "estimate", 50),
                         "tiny's 50 articles, analyzed by the seed")

    def test_slow_statement_fails_within_db_timeout(self):
        """A statement stuck behind a lock is cancelled at --db-timeout: 503, and the rest goes on."""
        env = self.start_env()
        sid, _ = self.store_in(env, 1)
        holder = subprocess.Popen(
            [PSQL, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", env.url, "-c",
             "BEGIN; LOCK TABLE stores IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={k: v for k, v in os.environ.items() if not k.startswith("PG")})
        try:
            self.poll("lock taken", lambda: (scalar(env.url, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON"
                                                             " c.oid = l.relation WHERE c.relname = 'stores' AND"
                                                             " l.mode = 'AccessExclusiveLock' AND l.granted") == "1",),
                      within=5, interval=0.02)
            other = {}
            if self.MODE == "async":
                # a neighbour that does not need the locked table is not held up past the timeout
                t = threading.Thread(target=lambda: other.update(
                    r=self.timed(env, "GET", "/stores/categories")))
                t.start()
            resp = self.timed(env, "GET", "/stores/%d" % sid)
            self.assert_503(resp, "GET /stores/%d behind a lock" % sid)
            self.assertGreater(resp[3], DB_TIMEOUT_MS / 1000.0 * 0.8, "503 before the timeout: %.2f s" % resp[3])
            if self.MODE == "async":
                t.join(CLIENT_TIMEOUT + 1)
                s, _, b, secs = other["r"]
                self.assertEqual(s, 200, b)
                self.assertEqual(json.loads(b), db_categories(env.url))
                self.assertLess(secs, PG_FAIL_WITHIN)
        finally:
            try:
                holder.wait(10)
            except subprocess.TimeoutExpired:
                holder.kill()
                holder.wait()
        self.poll("GET /stores/%d 200 once the lock is gone" % sid,
                  lambda: (self.timed(env, "GET", "/stores/%d" % sid)[0] == 200,), within=5)


class PgFaultsAsync(PgFaults, FaultCase):
    MODE, REDIS_DB = "async", 10


class PgFaultsSync(PgFaults, FaultCase):
    MODE, REDIS_DB = "sync", 11


# ----------------------------------------------------------------------------------------------
# Redis


class RedisFaults:
    MODE = "async"

    def listing_ok(self, env, cat, expect_cache=None, fast=True):
        s, h, b, secs = self.timed(env, "GET", "/stores?categoryId=%d" % cat)
        self.assertEqual(s, 200, "listing with Redis in trouble: %d %r" % (s, b[:200]))
        self.assertEqual(json.loads(b), db_listing(env.url, cat))
        if expect_cache is not None:
            self.assertEqual(h.get("x-cache"), expect_cache)
        if fast:
            self.assertLess(secs, REDIS_SLOW_WITHIN, "listing took %.2f s with --cache-timeout %d"
                            % (secs, CACHE_TIMEOUT_MS))
        return h.get("x-cache"), b

    def caching_resumes(self, env, cat, allow_first_hit=True):
        """Polls the listing until it is cached again: (MISS then) HIT, bodies equal to PostgreSQL's."""
        seen = []

        def hit():
            xc, _ = self.listing_ok(env, cat, fast=False)
            seen.append(xc)
            return (xc == "HIT", xc)
        self.poll("listing cached again after Redis returned (seen %s)" % seen, hit)
        cached = [x for x in seen if x != "BYPASS"]
        if not allow_first_hit:
            self.assertEqual(cached[:1], ["MISS"], seen)
        return seen

    def test_redis_stopped_then_back(self):
        env = self.start_env()
        cat = 3
        self.fill(env, cat)
        m0 = scrape(env)
        with redis_stopped():
            for _ in range(3):
                self.listing_ok(env, cat, "BYPASS")
            self.listing_ok(env, 4, "BYPASS")
            m1 = scrape(env)
            self.assertGreaterEqual(m1.total("cache_requests_total", result="error")
                                    - m0.total("cache_requests_total", result="error"), 4)
            # named down, still ready: the listing is served from PostgreSQL meanwhile
            s, _, b, _ = self.timed(env, "GET", "/readyz")
            self.assertEqual((s, json.loads(b)), (200, {"db": "ok", "redis": "down"}))
            s, _, b, _ = self.timed(env, "GET", "/stores/1")
            self.assertEqual(s, 200)
        # back on the same port, empty: MISS, then HIT
        self.caching_resumes(env, cat, allow_first_hit=False)
        s, _, b, _ = self.timed(env, "GET", "/readyz")
        self.assertEqual((s, json.loads(b)), (200, {"db": "ok", "redis": "ok"}))

    def test_readyz_sees_a_paused_redis_that_nothing_asks(self):
        """A paused Redis keeps its socket open: /readyz must still name it down within a few
        seconds, with no other request touching Redis, and ok again once it
        answers. The instance stays ready (200) throughout: PostgreSQL serves what Redis would."""
        env = self.start_env()
        self.poll("/readyz 200 at the start", lambda: (self.timed(env, "GET", "/readyz")[0] == 200,))

        def readyz(status, redis):
            s, _, b, _ = self.timed(env, "GET", "/readyz")
            return (s == status and json.loads(b) == {"db": "ok", "redis": redis}, s, b)
        with redis_paused():
            t0 = time.monotonic()
            self.poll("/readyz names Redis down while it is paused", lambda: readyz(200, "down"), within=4)
            self.assertLess(time.monotonic() - t0, 4)
        self.poll("/readyz 200 once Redis answers", lambda: readyz(200, "ok"), within=6)

    def test_redis_paused_answers_within_cache_timeout(self):
        env = self.start_env()
        cat = 2
        self.fill(env, cat)
        m0 = scrape(env)
        with redis_paused():
            t_end = time.monotonic() + 2.0
            n = 0
            while time.monotonic() < t_end:
                self.listing_ok(env, cat, "BYPASS")
                n += 1
                time.sleep(0.1)
        m1 = scrape(env)
        self.assertGreaterEqual(m1.total("cache_requests_total", result="error")
                                - m0.total("cache_requests_total", result="error"), n)
        self.caching_resumes(env, cat)

    def test_redis_client_pause_answers_within_cache_timeout(self):
        """CLIENT PAUSE 2000 ALL (DEBUG SLEEP is disabled in Redis 7 by default): Redis holds every
        command for 2 s without closing anything."""
        env = self.start_env()
        cat = 5
        self.fill(env, cat)
        self.assertEqual(redis_cli(0, "CLIENT", "PAUSE", "2000", "ALL"), "OK")
        t_end = time.monotonic() + 1.7
        while time.monotonic() < t_end:
            self.listing_ok(env, cat, "BYPASS")
            time.sleep(0.1)
        self.caching_resumes(env, cat)

    def _write_while_paused(self, stall_first):
        env = self.start_env()
        cat = 4
        sid, owner = self.store_in(env, cat)
        token = make_session(env.url, owner)
        psql(env.url, "UPDATE stores SET open_status = 'OPENED' WHERE id = %d" % sid)
        env.flush()
        self.fill(env, cat)
        with redis_paused():
            if stall_first:
                self.listing_ok(env, cat, "BYPASS")  # the client now knows Redis is stalled
            s, _, b, secs = self.timed(env, "PATCH", "/stores/%d/closed" % sid, headers=auth(token))
            self.assertEqual(s, 200, b)
            self.assertLess(secs, REDIS_SLOW_WITHIN, "PATCH took %.2f s with Redis paused" % secs)
            self.assertEqual(json.loads(b)["openStatus"], "CLOSED")
            self.assertEqual(scalar(env.url, "SELECT open_status FROM stores WHERE id = %d" % sid), "CLOSED")
            if stall_first:
                xc, b = self.listing_ok(env, cat, "BYPASS")
                time.sleep(2.0)  # longer than the client's stall limit: it drops the connection
        # no read after the write may show the old status
        stale = []
        seen = []

        def hit():
            s, h, b, _ = self.timed(env, "GET", "/stores?categoryId=%d" % cat)
            got = [x["openStatus"] for x in json.loads(b) if x["id"] == sid] if s == 200 else None
            seen.append((s, h.get("x-cache"), got))
            if got != ["CLOSED"]:
                stale.append(seen[-1])
            return (s == 200 and h.get("x-cache") == "HIT", seen[-1])
        self.poll("listing cached again after SIGCONT", hit)
        if stale:
            self.fail("PATCH /stores/%d/closed -> 200 while Redis was paused; reads after SIGCONT"
                      " (status, X-Cache, openStatus): %r" % (sid, seen))
        self.assertEqual(redis_cli(self.REDIS_DB, "EXISTS", CACHE_KEY % cat), "1")

    def test_write_while_paused_not_stale(self):
        self._write_while_paused(stall_first=False)

    def test_write_while_stalled_not_stale(self):
        self._write_while_paused(stall_first=True)


class RedisFaultsAsync(RedisFaults, FaultCase):
    MODE, REDIS_DB = "async", 12


class RedisFaultsSync(RedisFaults, FaultCase):
    MODE, REDIS_DB = "sync", 13

    # the sync variant skips CLIENT PAUSE (the SIGSTOP pause covers a slow Redis)
    test_redis_client_pause_answers_within_cache_timeout = None


# ----------------------------------------------------------------------------------------------
# Writes under load across a PostgreSQL outage


class WritesAcrossPgOutage(unittest.TestCase):
    """8 clients create articles for ~10 s on 2 workers while PostgreSQL is stopped for ~3 s in
    the middle. Every answer is 201 or 503 (with Retry-After), none takes longer than the query
    timeout allows, /health_check stays 200 throughout, creation works again by itself after the
    restart, and every article whose creation returned 201 is in the database afterwards."""

    MODE, REDIS_DB, WORKERS, CLIENTS, RUN_S = "async", 14, 2, 8, 10.0

    def test_no_acknowledged_write_is_lost(self):
        env = Env(self.REDIS_DB, mode=self.MODE, workers=self.WORKERS, extra=["--db-timeout", str(DB_TIMEOUT_MS)])
        env.start()
        self.addCleanup(env.finish)
        token = make_session(env.url, 1)
        results, probes = self.write_across_outage(env, token)
        statuses = [r[0] for r in results]
        self.assertTrue(set(statuses) <= {201, 503}, "unexpected statuses: %r" % sorted(set(statuses)))
        self.assertIn(503, statuses, "the outage was not seen")
        for status, headers, body, elapsed in results:
            self.assertLess(elapsed, PG_FAIL_WITHIN + 1.0, "a request took %.2f s" % elapsed)
            if status == 503:
                self.assertIn("retry-after", headers)
        self.assertEqual(set(probes), {200}, "health checks during the outage: %r" % sorted(set(probes)))
        # recovery without a restart: creations succeed after PostgreSQL came back
        created_after = [r for r in results[len(results) // 2:] if r[0] == 201]
        deadline = time.monotonic() + RECOVERY_WITHIN
        while not created_after and time.monotonic() < deadline:
            status = env.req("POST", "/api/articles", {"article": {"title": "after", "description": "d", "body": "b"}},
                             headers=json_headers(token))[0]
            if status == 201:
                created_after.append(status)
            time.sleep(0.2)
        self.assertTrue(created_after, "no creation succeeded after PostgreSQL restarted")
        # no acknowledged write is lost
        slugs = [json.loads(body)["article"]["slug"] for status, _, body, _ in results if status == 201]
        self.assertTrue(slugs)
        in_db = set(psql(env.url, "SELECT slug FROM articles WHERE title LIKE 'outage %%'").split())
        missing = [s for s in slugs if s not in in_db]
        self.assertEqual(missing, [], "%d acknowledged articles are missing" % len(missing))

    def write_across_outage(self, env, token):
        """CLIENTS writers create articles and a prober checks /health_check every 0.1 s for RUN_S
        seconds, PostgreSQL stopped from 3 s to 6 s: ([(status, headers, body, seconds)] of the
        writes, [status] of the probes); -1 is a refused or reset connection."""
        results, probes, lock = [], [], threading.Lock()
        stop_at = time.monotonic() + self.RUN_S

        def writer(n):
            i = 0
            while time.monotonic() < stop_at:
                title = "outage %d %d" % (n, i)
                i += 1
                t0 = time.monotonic()
                try:
                    status, headers, body = env.req("POST", "/api/articles", {"article": {
                        "title": title, "description": "d", "body": "b"}}, headers=json_headers(token))
                except OSError as e:  # a refused or reset connection is a failure here
                    status, headers, body = -1, {}, str(e).encode()
                with lock:
                    results.append((status, headers, body, time.monotonic() - t0))

        def prober():
            while time.monotonic() < stop_at:
                try:
                    status = env.get("/health_check")[0]
                except OSError:
                    status = -1
                with lock:
                    probes.append(status)
                time.sleep(0.1)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(self.CLIENTS)]
        threads.append(threading.Thread(target=prober))
        for t in threads:
            t.start()
        try:
            time.sleep(3.0)
            pg_stop()
            time.sleep(3.0)
        finally:
            pg_start()
        for t in threads:
            t.join(timeout=self.RUN_S + 30)
        return results, probes

if __name__ == "__main__":
    unittest.main()
