#!/usr/bin/python3
"""Integration tests: --cache-local, each worker's in-memory copy of the listings it read from Redis.

Run under loadscripts/sutlab_lab/services/with-services. With --redis-cache --cache-local, a listing found in Redis
is also kept in the worker's memory and later hits are answered from there (X-Cache: HIT, counted
in cache_requests_total{result="hit"} and cache_local_hits_total). The copy must never be
trusted longer than Redis's client-side caching (CLIENT TRACKING ... REDIRECT to a connection
subscribed to __redis__:invalidate) vouches for it:
  - anything modifying a key in Redis drops the copy of that key: asynchronously for another
    client (the name arrives on the tracker connection), so those tests poll for a short while;
  - a write through sutlab's own API drops every worker's copy before it answers (no polling);
  - a lost tracker or Redis connection drops the copy until tracking is set up again;
  - a copy is used only while Redis answers (a frozen Redis sends no invalidations either);
  - a copy never outlives --cache-ttl.
Expected values come from PostgreSQL (psql) or from what the test wrote into Redis itself.

Every test starts a sutlab of its own (fresh database, seeded tiny). Redis db numbers: 15 (async)
and 0 (sync) -- the only ones the other files leave free; test_delivery.py's two --cache-local
classes use them too, which is fine because integration tests never run side by side
(is_parallel: false). Key tracking is not per db in Redis anyway: the names are global.
"""

import json
import os
import re
import time
import unittest

from pgtest import psql, scalar
from sutlab_testlib import Server, build_request, free_port, port_is_free, run_cli
from test_data_faults import redis_paused, redis_ping, redis_start, redis_stop
from test_delivery import CACHE_KEY, Env, auth, db_listing, make_session, redis_cli, server_timing

WARM_WITHIN = 5.0          # tracking set up after a start or a reconnect: local hits begin
INVALIDATION_WITHIN = 0.2  # another Redis client's change reaches the copy (asynchronous)
OTHER_PROCESS_WITHIN = 0.5  # a write through another sutlab process reaches this one's copy
RECOVERY_WITHIN = 10.0     # Redis restarted: caching and local hits resume
MARKER = '[{"marker":1}]'
MARKER2 = '[{"marker":2}]'


# ----------------------------------------------------------------------------------------------
# Helpers


def listing(srv, category):
    """GET /stores?categoryId=N on a fresh connection to `srv` (a sutlab_testlib.Server)."""
    return srv.request("GET", "/stores?categoryId=%d" % category, timeout=5.0)


def cache_metrics(srv):
    """The whole /metrics exposition, strictly parsed."""
    return srv.metrics()


def local_hits(srv):
    v = cache_metrics(srv).get_value("cache_local_hits_total")
    if v is None:
        raise AssertionError("/metrics has no cache_local_hits_total")
    return v


def hget_calls():
    """How many HGETs the harness's Redis has executed since it started (all clients, all dbs)."""
    m = re.search(r"^cmdstat_hget:calls=(\d+),", redis_cli(0, "INFO", "commandstats"), re.M)
    return int(m.group(1)) if m else 0


def client_list():
    """CLIENT LIST as a list of {field: value} dicts."""
    out = []
    for line in redis_cli(0, "CLIENT", "LIST").splitlines():
        out.append(dict(kv.split("=", 1) for kv in line.split() if "=" in kv))
    return out


def open_statuses(body, sid):
    return [s["openStatus"] for s in json.loads(body) if s["id"] == sid]


# ----------------------------------------------------------------------------------------------
# The scenarios, for --db-mode async and sync


class CacheLocalScenarios:
    MODE = "async"
    REDIS_DB = 15

    def start_env(self, ttl=60, workers=1, extra=()):
        env = Env(self.REDIS_DB, mode=self.MODE, cache=True, local=True, ttl=ttl, workers=workers, extra=extra)
        self.addCleanup(env.finish)
        env.start()
        return env

    def store_in(self, env, category, status=None):
        """(store id, owner id) of the first fixture store of `category`, set to `status` if given."""
        sid, owner = (int(x) for x in scalar(env.url, "SELECT id || '|' || owner_id FROM stores WHERE"
                                                      " category_id = %d ORDER BY id LIMIT 1" % category).split("|"))
        if status is not None:
            psql(env.url, "UPDATE stores SET open_status = '%s' WHERE id = %d" % (status, sid))
        return sid, owner

    def wait_local(self, srv, category, within=WARM_WITHIN):
        """Reads the listing until the worker answers it from its copy (cache_local_hits_total grows:
        tracking is up and the copy is in place). Returns the last body. Every answer must be 200."""
        base = local_hits(srv)
        deadline = time.monotonic() + within
        seen = []
        while True:
            s, h, b = listing(srv, category)
            self.assertEqual(s, 200, b[:300])
            seen.append(h.get("x-cache"))
            if h.get("x-cache") == "HIT" and local_hits(srv) > base:
                return b
            if time.monotonic() >= deadline:
                self.fail("no local hit for category %d within %.0f s (X-Cache seen: %s)\nstderr: %s"
                          % (category, within, seen[-20:], srv.stderr()[-2000:]))
            time.sleep(0.02)

    def poll_listing(self, srv, category, done, allowed, within, what):
        """Reads the listing until done(resp); every earlier answer must satisfy allowed(resp).
        Fails if done is not reached within `within` s. Returns (resp, seconds, attempts)."""
        t0 = time.monotonic()
        n = 0
        while True:
            resp = listing(srv, category)
            n += 1
            elapsed = time.monotonic() - t0
            self.assertEqual(resp[0], 200, "%s: %r" % (what, resp[2][:300]))
            if done(resp):
                return resp, elapsed, n
            self.assertTrue(allowed(resp), "%s: unexpected answer after %.3f s: X-Cache %s, %r"
                            % (what, elapsed, resp[1].get("x-cache"), resp[2][:300]))
            if elapsed >= within:
                self.fail("%s: not within %.3f s (%d reads; last X-Cache %s, body %r)"
                          % (what, within, n, resp[1].get("x-cache"), resp[2][:200]))
            time.sleep(0.005)

    # -- a. memory hits

    def test_memory_hits_skip_redis(self):
        env = self.start_env()
        self.wait_local(env.srv, 5)  # tracking is up (another category, so ours starts empty)
        cat = 1
        addr = scalar(env.url, "SELECT address FROM stores WHERE category_id = %d ORDER BY id LIMIT 1" % cat)
        # both MISSes first: a MISS writes its field into the category's hash, and Redis invalidates
        # whole keys, so the address MISS would drop the copy of field `all` a HIT made before it
        r1, a1 = env.listing(cat), env.listing(cat, addr)
        r2, a2 = env.listing(cat), env.listing(cat, addr)
        self.assertEqual([r[1].get("x-cache") for r in (r1, r2, a1, a2)], ["MISS", "HIT", "MISS", "HIT"])
        self.assertEqual(json.loads(r1[2]), db_listing(env.url, cat))
        self.assertEqual(json.loads(a1[2]), db_listing(env.url, cat, addr))
        self.assertEqual((r2[2], a2[2]), (r1[2], a1[2]))
        # The HITs filled the copy, but in async mode the invalidation of the MISSes' own HSETs (the
        # tracker names every write of a tracked key, ours included) can land after a HIT's reply and
        # drop what it filled; then the next read goes to Redis once more and fills again. So: read
        # until both fields are answered from memory (each read a HIT with the same body), then count.
        deadline = time.monotonic() + WARM_WITHIN
        while True:
            l0 = local_hits(env.srv)
            for what, r, first in (("all", env.listing(cat), r1), ("address", env.listing(cat, addr), a1)):
                self.assertEqual((r[0], r[1].get("x-cache"), r[2]), (200, "HIT", first[2]), what)
            if local_hits(env.srv) - l0 == 2:
                break
            if time.monotonic() >= deadline:
                self.fail("the copies of category %d were never used within %.0f s" % (cat, WARM_WITHIN))
        m0, h0 = cache_metrics(env.srv), hget_calls()
        extra = 10
        for i in range(extra):
            for what, r, first in (("all", env.listing(cat), r1), ("address", env.listing(cat, addr), a1)):
                self.assertEqual((r[0], r[1].get("x-cache")), (200, "HIT"), "extra read %d (%s)" % (i, what))
                self.assertEqual(r[2], first[2], "extra read %d (%s): body differs" % (i, what))
                # answered from memory: no database
                self.assertEqual(server_timing(r[1]).get("db"), 0.0, r[1].get("server-timing"))
        m1, h1 = cache_metrics(env.srv), hget_calls()
        self.assertEqual(m1.types.get("cache_local_hits_total"), "counter")
        self.assertEqual(m1.types.get("cache_local_bytes"), "gauge")

        def delta(name, **lb):
            return m1.value(name, **lb) - m0.value(name, **lb)

        self.assertEqual(delta("cache_local_hits_total"), 2 * extra)
        self.assertEqual(delta("cache_requests_total", result="hit"), 2 * extra)  # local hits count as hits
        self.assertEqual(delta("cache_requests_total", result="miss"), 0)
        self.assertEqual(delta("cache_requests_total", result="error"), 0)
        self.assertEqual(h1 - h0, 0, "the %d local hits still sent HGETs to Redis" % (2 * extra))
        self.assertGreaterEqual(m1.value("cache_local_bytes"), len(r1[2]) + len(a1[2]))
        # the control: without the copy every hit is an HGET (FLUSHDB drops every copy)
        redis_cli(self.REDIS_DB, "FLUSHDB")
        self.poll_listing(env.srv, cat, lambda r: r[1].get("x-cache") == "MISS",
                          lambda r: r[1].get("x-cache") == "HIT" and r[2] == r1[2], INVALIDATION_WITHIN,
                          "MISS after FLUSHDB")
        h2 = hget_calls()
        self.assertEqual(env.listing(cat)[1].get("x-cache"), "HIT")
        self.assertEqual(hget_calls() - h2, 1, "a Redis HIT (the copy was flushed) sent no HGET")

    def test_tracking_connections_in_client_list(self):
        env = self.start_env()
        self.wait_local(env.srv, 2)
        clients = client_list()
        by_id = {c["id"]: c for c in clients}
        tracking = [c for c in clients if "t" in c.get("flags", "") and c.get("db") == str(self.REDIS_DB)]
        self.assertEqual(len(tracking), 1, "one worker, one tracking connection: %r" % clients)
        tracker = by_id.get(tracking[0].get("redir"))
        self.assertIsNotNone(tracker, "tracking redirected to no live client: %r" % clients)
        self.assertIn("P", tracker["flags"], tracker)
        self.assertEqual((tracker["cmd"], tracker["sub"]), ("subscribe", "1"), tracker)

    # -- b. another client changes Redis

    def test_other_client_changes_reach_the_copy(self):
        env = self.start_env()
        cat = 2
        key = CACHE_KEY % cat
        old = self.wait_local(env.srv, cat)
        self.assertEqual(json.loads(old), db_listing(env.url, cat))
        # Cross-client invalidation is asynchronous: Redis names the key on the worker's tracker
        # connection when the HSET runs, and the worker reads it off that socket later, so a read
        # racing it may still get the old copy; it must arrive within INVALIDATION_WITHIN.
        redis_cli(self.REDIS_DB, "HSET", key, "all", MARKER)
        resp, secs, n = self.poll_listing(env.srv, cat, lambda r: r[2] == MARKER.encode(),
                                          lambda r: r[2] == old, INVALIDATION_WITHIN, "HSET by another client")
        self.assertEqual(resp[1].get("x-cache"), "HIT")
        for _ in range(5):  # from now on, never the old copy again
            r = env.listing(cat)
            self.assertEqual((r[0], r[1].get("x-cache"), r[2]), (200, "HIT", MARKER.encode()))
        redis_cli(self.REDIS_DB, "DEL", key)
        resp, secs, n = self.poll_listing(env.srv, cat, lambda r: r[1].get("x-cache") == "MISS",
                                          lambda r: r[1].get("x-cache") == "HIT" and r[2] == MARKER.encode(),
                                          INVALIDATION_WITHIN, "DEL by another client")
        self.assertEqual(json.loads(resp[2]), db_listing(env.url, cat))
        r = env.listing(cat)
        self.assertEqual((r[1].get("x-cache"), r[2]), ("HIT", resp[2]))

    def test_any_modification_drops_the_copy(self):
        """EXPIRE, an HSET of another field and FLUSHDB leave the value of field `all` alone or gone;
        the copy must be dropped all the same: the next read goes to Redis (one HGET)."""
        env = self.start_env()
        cat = 3
        key = CACHE_KEY % cat
        for what, args, after in (("EXPIRE", ("EXPIRE", key, "300"), "HIT"),
                                  ("HSET of another field", ("HSET", key, "a:Nowhere 9", "[]"), "HIT"),
                                  ("PERSIST", ("PERSIST", key), "HIT"),
                                  ("FLUSHDB", ("FLUSHDB",), "MISS")):
            body = self.wait_local(env.srv, cat)
            redis_cli(self.REDIS_DB, *args)
            deadline = time.monotonic() + INVALIDATION_WITHIN
            while True:
                h0 = hget_calls()
                r = env.listing(cat)
                went_to_redis = hget_calls() - h0
                self.assertEqual(r[0], 200)
                self.assertEqual(json.loads(r[2]), db_listing(env.url, cat), what)
                if went_to_redis:
                    self.assertEqual(r[1].get("x-cache"), after, what)
                    break
                self.assertEqual(r[2], body, what)
                if time.monotonic() >= deadline:
                    self.fail("%s by another client: the copy was still used after %.1f s"
                              % (what, INVALIDATION_WITHIN))
                time.sleep(0.005)

    # -- c. writes through the API, every worker

    def two_worker_readers(self, env, cat):
        """16 keep-alive connections (spread over both workers by SO_REUSEPORT; all on one: 2^-15)
        and a read_all() that sends the listing request on each, then reads every answer."""
        get = build_request("GET", "/stores?categoryId=%d" % cat)
        readers = [env.srv.raw_conn() for _ in range(16)]
        self.addCleanup(lambda: [c.close() for c in readers])

        def read_all():
            for c in readers:
                c.send(get)
            out = []
            for c in readers:
                r = c.read_response()
                self.assertEqual(r.status, 200, r)
                out.append(r)
            return out
        return readers, read_all

    def fill_every_worker(self, env, read_all, what):
        """Reads on every connection until both workers hold a copy, then once more: every answer
        must come from memory. Returns the body. The proof that both hold one: the summed
        cache_local_bytes is at least two bodies' worth (one copy costs its body plus ~150 bytes of
        names and bookkeeping, under twice the body)."""
        deadline = time.monotonic() + WARM_WITHIN
        while True:
            rs = read_all()
            body = rs[-1].body
            self.assertGreater(len(body), 1000, "the two-copies argument needs a listing over 1 kB")
            held = cache_metrics(env.srv).value("cache_local_bytes")
            if all(r.headers.get("x-cache") == "HIT" for r in rs) and held >= 2 * len(body):
                break
            if time.monotonic() >= deadline:
                self.fail("%s: both workers never held a copy (cache_local_bytes %d, body %d bytes, X-Cache %s)"
                          % (what, held, len(body), [r.headers.get("x-cache") for r in rs]))
        l0 = local_hits(env.srv)
        rs = read_all()
        self.assertEqual(local_hits(env.srv) - l0, len(rs), "%s: reads were not all answered from memory" % what)
        self.assertTrue(all(r.body == body for r in rs), what)
        return body

    def test_api_write_visible_at_once_on_every_worker(self):
        env = self.start_env(workers=2)
        cat = 4
        sid, owner = self.store_in(env, cat, status="OPENED")
        token = make_session(env.url, owner)
        readers, read_all = self.two_worker_readers(env, cat)
        writer = env.srv.raw_conn()
        self.addCleanup(writer.close)
        stale = []
        for rnd in range(12):
            verb, status = ("closed", "CLOSED") if rnd % 2 == 0 else ("opened", "OPENED")
            body = self.fill_every_worker(env, read_all, "round %d" % rnd)
            self.assertNotEqual(open_statuses(body, sid), [status], "round %d: %s before the write" % (rnd, status))
            writer.send(build_request("PATCH", "/stores/%d/%s" % (sid, verb), headers=auth(token)))
            w = writer.read_response()
            self.assertEqual(w.status, 200, w)
            self.assertEqual(json.loads(w.body)["openStatus"], status)
            # the very next reads, as soon as the write answered, on every connection: no retry
            after = read_all()
            expected = db_listing(env.url, cat)
            for k, r in enumerate(after):
                got = open_statuses(r.body, sid)
                if got != [status] or json.loads(r.body) != expected:
                    stale.append("round %d: PATCH /stores/%d/%s -> 200, then GET on connection %d -> X-Cache %s,"
                                 " openStatus %r" % (rnd, sid, verb, k, r.headers.get("x-cache"), got))
        if stale:
            self.fail("%d stale reads:\n%s" % (len(stale), "\n".join(stale[:10])))

    def test_api_write_keeps_the_other_categories_copies(self):
        """A write drops the copies of its own category only: another category's listing is still
        answered from memory right after it (writes are counted per key, not per process)."""
        env = self.start_env()
        cat_w, cat_o = 2, 3
        sid, owner = self.store_in(env, cat_w, status="OPENED")
        token = make_session(env.url, owner)
        self.wait_local(env.srv, cat_w)
        other = self.wait_local(env.srv, cat_o)
        s, _, b = env.srv.request("PATCH", "/stores/%d/closed" % sid, headers=auth(token), timeout=5.0)
        self.assertEqual(s, 200, b)
        s, h, b = listing(env.srv, cat_w)
        self.assertEqual(s, 200)
        self.assertEqual(h.get("x-cache"), "MISS", "the written category must come from PostgreSQL")
        self.assertEqual(json.loads(b), db_listing(env.url, cat_w))
        self.assertEqual(open_statuses(b, sid), ["CLOSED"])
        l0 = local_hits(env.srv)
        s, h, b = listing(env.srv, cat_o)
        self.assertEqual((s, h.get("x-cache")), (200, "HIT"))
        self.assertEqual(b, other)
        self.assertEqual(local_hits(env.srv) - l0, 1, "category %d was not answered from memory after a write to"
                                                      " category %d" % (cat_o, cat_w))

    def test_api_write_while_redis_paused_visible_on_every_worker(self):
        """With Redis frozen (SIGSTOP) nothing can reach the trackers: the DEL times out, the write
        answers anyway, and only the process's own count of writes per key keeps the other worker from
        answering with its copy. (In the test above Redis's message usually arrives in time too.)"""
        env = self.start_env(workers=2)
        cat = 5
        sid, owner = self.store_in(env, cat, status="OPENED")
        token = make_session(env.url, owner)
        readers, read_all = self.two_worker_readers(env, cat)
        writer = env.srv.raw_conn()
        self.addCleanup(writer.close)
        self.fill_every_worker(env, read_all, "before the pause")
        with redis_paused():
            t0 = time.monotonic()
            writer.send(build_request("PATCH", "/stores/%d/closed" % sid, headers=auth(token)))
            w = writer.read_response()
            self.assertEqual(w.status, 200, w)
            self.assertLess(time.monotonic() - t0, 1.0, "PATCH with Redis paused (--cache-timeout 100 ms)")
            expected = db_listing(env.url, cat)
            self.assertEqual(open_statuses(json.dumps(expected), sid), ["CLOSED"])
            for k, r in enumerate(read_all()):  # no retry
                self.assertEqual(json.loads(r.body), expected, "connection %d right after the PATCH, Redis paused:"
                                 " X-Cache %s, openStatus %r" % (k, r.headers.get("x-cache"),
                                                                open_statuses(r.body, sid)))
                self.assertEqual(r.headers.get("x-cache"), "BYPASS", "connection %d" % k)
        # Redis back: the DELs go through, and the copies come back with the new listing only
        deadline = time.monotonic() + RECOVERY_WITHIN
        while True:
            rs = read_all()
            for k, r in enumerate(rs):
                self.assertEqual(json.loads(r.body), expected, "connection %d after SIGCONT (X-Cache %s)"
                                 % (k, r.headers.get("x-cache")))
            if all(r.headers.get("x-cache") == "HIT" for r in rs):
                break
            if time.monotonic() >= deadline:
                self.fail("not cached again within %.0f s of SIGCONT" % RECOVERY_WITHIN)
            time.sleep(0.05)
        self.assertEqual(json.loads(self.fill_every_worker(env, read_all, "after SIGCONT")), expected)

    # -- d. two sutlab processes

    def test_write_through_another_process(self):
        env = self.start_env()  # A
        b = Server(extra_args=["--db-url", env.url] + env.args, workers=1)  # B: same database, same Redis db
        self.addCleanup(b.close)
        self.addCleanup(b.finish)
        b.start()
        cat = 5
        sid, owner = self.store_in(env, cat, status="OPENED")
        token = make_session(env.url, owner)
        lags = []
        for rnd in range(6):
            verb, status = ("closed", "CLOSED") if rnd % 2 == 0 else ("opened", "OPENED")
            old = self.wait_local(b, cat)
            self.wait_local(env.srv, cat)
            self.assertNotEqual(open_statuses(old, sid), [status])
            w = env.req("PATCH", "/stores/%d/%s" % (sid, verb), headers=auth(token))
            self.assertEqual(w[0], 200, w)
            resp, secs, n = self.poll_listing(
                b, cat, lambda r: open_statuses(r[2], sid) == [status], lambda r: r[2] == old,
                OTHER_PROCESS_WITHIN, "round %d: PATCH %s through A, listing on B" % (rnd, verb))
            lags.append(round(secs, 3))
            self.assertEqual(json.loads(resp[2]), db_listing(env.url, cat))
            for i in range(10):  # never stale after that, on either process
                for name, srv in (("B", b), ("A", env.srv)):
                    r = listing(srv, cat)
                    self.assertEqual(open_statuses(r[2], sid), [status], "round %d, read %d on %s after the change"
                                     " was seen (X-Cache %s)" % (rnd, i, name, r[1].get("x-cache")))
        self.assertEqual(len(lags), 6, lags)

    # -- e. the tracker connection is killed

    def test_tracker_killed(self):
        env = self.start_env()
        cat = 1
        key = CACHE_KEY % cat
        self.wait_local(env.srv, cat)
        killed = int(redis_cli(self.REDIS_DB, "CLIENT", "KILL", "TYPE", "pubsub"))
        self.assertEqual(killed, 1, "one worker, one tracker connection")
        # Redis cannot deliver this invalidation (the REDIRECT target is gone): only the worker
        # noticing the lost tracker keeps it from answering with its copy. No polling here.
        redis_cli(self.REDIS_DB, "HSET", key, "all", MARKER)
        r = env.listing(cat)
        self.assertEqual((r[0], r[2]), (200, MARKER.encode()),
                         "the copy was used after the tracker connection was lost (X-Cache %s)" % r[1].get("x-cache"))
        self.assertEqual(r[1].get("x-cache"), "HIT")
        # the tracker comes back by itself and local hits resume, still with Redis's value
        base = local_hits(env.srv)
        deadline = time.monotonic() + WARM_WITHIN
        while local_hits(env.srv) == base:
            r = env.listing(cat)
            self.assertEqual((r[0], r[2]), (200, MARKER.encode()), r[1].get("x-cache"))
            if time.monotonic() >= deadline:
                self.fail("local hits did not resume within %.0f s of the tracker's loss" % WARM_WITHIN)
            time.sleep(0.02)
        # ... and they are coherent again: tracking now redirects to the new tracker
        redis_cli(self.REDIS_DB, "HSET", key, "all", MARKER2)
        self.poll_listing(env.srv, cat, lambda r: r[2] == MARKER2.encode(), lambda r: r[2] == MARKER.encode(),
                          INVALIDATION_WITHIN, "HSET after the tracker reconnected")
        clients = client_list()
        by_id = {c["id"]: c for c in clients}
        tracking = [c for c in clients if "t" in c.get("flags", "") and c.get("db") == str(self.REDIS_DB)]
        self.assertEqual(len(tracking), 1, clients)
        self.assertEqual(by_id.get(tracking[0]["redir"], {}).get("cmd"), "subscribe", clients)

    # -- f. Redis stopped and restarted

    def test_redis_stopped_then_back(self):
        env = self.start_env()
        cat = 2
        sid, owner = self.store_in(env, cat, status="OPENED")
        token = make_session(env.url, owner)
        before = self.wait_local(env.srv, cat)
        self.assertEqual(open_statuses(before, sid), ["OPENED"])

        def restore():
            if not redis_ping():
                redis_start()
        self.addCleanup(restore)
        redis_stop()

        def fresh(what):
            """While Redis is down: 200 from PostgreSQL, BYPASS, never the copy."""
            r = env.listing(cat)
            self.assertEqual((r[0], r[1].get("x-cache")), (200, "BYPASS"), "%s: %r" % (what, r[2][:200]))
            self.assertEqual(json.loads(r[2]), db_listing(env.url, cat), what)
            return r[2]

        for i in range(3):
            self.assertEqual(fresh("read %d with Redis stopped" % i), before)
        w = env.req("PATCH", "/stores/%d/closed" % sid, headers=auth(token))
        self.assertEqual(w[0], 200, w)
        self.assertEqual(open_statuses(fresh("after PATCH with Redis stopped"), sid), ["CLOSED"])
        name = "Renamed during the outage %s" % os.urandom(3).hex()
        psql(env.url, "UPDATE stores SET name = '%s' WHERE id = %d" % (name, sid))
        self.assertIn(name, fresh("after an SQL UPDATE with Redis stopped").decode())
        redis_start()
        # back (empty): every answer is PostgreSQL's current listing, then cached, then local again
        expected = db_listing(env.url, cat)
        seen = []
        base = local_hits(env.srv)
        deadline = time.monotonic() + RECOVERY_WITHIN
        while True:
            r = env.listing(cat)
            seen.append(r[1].get("x-cache"))
            self.assertEqual(r[0], 200)
            self.assertEqual(json.loads(r[2]), expected, "after Redis restarted (X-Cache so far %s)" % seen)
            if r[1].get("x-cache") == "HIT" and local_hits(env.srv) > base:
                break
            if time.monotonic() >= deadline:
                self.fail("local hits did not resume within %.0f s of Redis's restart (X-Cache %s)"
                          % (RECOVERY_WITHIN, seen[-20:]))
            time.sleep(0.05)
        cached = [x for x in seen if x != "BYPASS"]
        self.assertEqual(cached[:1], ["MISS"], "the first cached answer after the restart: %s" % seen)

    # -- g. --cache-ttl bounds the copy

    def test_copy_does_not_outlive_ttl(self):
        env = self.start_env(ttl=1)
        cat = 3
        key = CACHE_KEY % cat
        sid, _ = self.store_in(env, cat)
        self.wait_local(env.srv, 5)  # tracking is up
        r1, r2 = env.listing(cat), env.listing(cat)
        self.assertEqual([r1[1].get("x-cache"), r2[1].get("x-cache")], ["MISS", "HIT"])
        l0 = local_hits(env.srv)
        for _ in range(3):
            r = env.listing(cat)
            self.assertEqual((r[1].get("x-cache"), r[2]), ("HIT", r1[2]))
        self.assertGreaterEqual(local_hits(env.srv) - l0, 2, "no local copy to outlive the TTL")
        # the database changes behind the cache's back: only the TTL ends the old listing
        name = "Renamed after caching %s" % os.urandom(3).hex()
        psql(env.url, "UPDATE stores SET name = '%s' WHERE id = %d" % (name, sid))
        time.sleep(2.5)
        self.assertEqual(redis_cli(self.REDIS_DB, "EXISTS", key), "0", "%s still in Redis after its TTL" % key)
        r3 = env.listing(cat)
        self.assertEqual(r3[0], 200)
        self.assertEqual(r3[1].get("x-cache"), "MISS", "a copy outlived --cache-ttl 1")
        self.assertEqual(json.loads(r3[2]), db_listing(env.url, cat))
        self.assertIn(name, r3[2].decode())
        self.assertEqual(env.listing(cat)[1].get("x-cache"), "HIT")

    def test_copy_does_not_outlive_ttl_without_invalidations(self):
        """In the test above Redis expires the key and its invalidation drops the copy. Under
        CLIENT PAUSE WRITE Redis still answers reads and PINGs (the copy stays trusted) but expires
        nothing and so sends no invalidation: only the copy's own --cache-ttl ends it."""
        env = self.start_env(ttl=1)
        cat = 4
        sid, _ = self.store_in(env, cat)
        old = self.wait_local(env.srv, cat)  # a copy, filled before now
        name = "Renamed behind the cache %s" % os.urandom(3).hex()
        psql(env.url, "UPDATE stores SET name = '%s' WHERE id = %d" % (name, sid))
        self.addCleanup(redis_cli, 0, "CLIENT", "UNPAUSE")
        self.assertEqual(redis_cli(0, "CLIENT", "PAUSE", "4000", "WRITE"), "OK")
        try:
            time.sleep(1.5)  # the copy is now older than --cache-ttl 1
            self.assertEqual(redis_cli(0, "PING"), "PONG")  # Redis answers
            r = env.listing(cat)
            self.assertEqual(r[0], 200, r[2][:300])
            self.assertNotEqual(r[2], old, "a copy older than --cache-ttl answered (X-Cache %s)" % r[1].get("x-cache"))
            self.assertNotEqual(r[1].get("x-cache"), "HIT")
            self.assertEqual(json.loads(r[2]), db_listing(env.url, cat))
        finally:
            redis_cli(0, "CLIENT", "UNPAUSE")
        self.assertIn(name, r[2].decode())
        deadline = time.monotonic() + RECOVERY_WITHIN
        while True:  # unpaused: PostgreSQL's listing, cached again
            r = env.listing(cat)
            self.assertEqual((r[0], json.loads(r[2])), (200, db_listing(env.url, cat)), r[1].get("x-cache"))
            if r[1].get("x-cache") == "HIT":
                break
            if time.monotonic() >= deadline:
                self.fail("not cached again within %.0f s of CLIENT UNPAUSE" % RECOVERY_WITHIN)
            time.sleep(0.05)

    # -- the copy is used only while Redis answers

    def test_copy_not_trusted_while_redis_is_frozen(self):
        """A frozen Redis (SIGSTOP) sends no invalidations: the copy must stop being used once the
        command connection has not heard from Redis for a while (0.5 s), long before --cache-ttl."""
        env = self.start_env(ttl=60)
        cat = 5
        sid, _ = self.store_in(env, cat)
        old = self.wait_local(env.srv, cat)
        name = "Renamed behind the cache %s" % os.urandom(3).hex()
        psql(env.url, "UPDATE stores SET name = '%s' WHERE id = %d" % (name, sid))
        with redis_paused():
            time.sleep(1.5)
            t0 = time.monotonic()
            r = env.listing(cat)
            secs = time.monotonic() - t0
            self.assertEqual(r[0], 200, r[2][:300])
            self.assertNotEqual(r[2], old, "the copy answered with Redis frozen for 1.5 s (X-Cache %s)"
                                % r[1].get("x-cache"))
            self.assertEqual((r[1].get("x-cache"), json.loads(r[2])), ("BYPASS", db_listing(env.url, cat)))
            self.assertLess(secs, 1.0, "listing with Redis frozen (--cache-timeout 100 ms)")
        # back. Redis's own entry predates the UPDATE, which went around the cache (legitimately
        # stale until its TTL): drop it, then PostgreSQL's listing must be cached again.
        redis_cli(self.REDIS_DB, "DEL", CACHE_KEY % cat)
        deadline = time.monotonic() + RECOVERY_WITHIN
        while True:
            r = env.listing(cat)
            self.assertEqual((r[0], json.loads(r[2])), (200, db_listing(env.url, cat)), r[1].get("x-cache"))
            if r[1].get("x-cache") == "HIT":
                break
            if time.monotonic() >= deadline:
                self.fail("not cached again within %.0f s of SIGCONT" % RECOVERY_WITHIN)
            time.sleep(0.05)


class CacheLocalAsync(CacheLocalScenarios, unittest.TestCase):
    MODE, REDIS_DB = "async", 15


class CacheLocalSync(CacheLocalScenarios, unittest.TestCase):
    MODE, REDIS_DB = "sync", 0


# ----------------------------------------------------------------------------------------------
# h. Flag validation


class FlagValidation(unittest.TestCase):
    def test_cache_local_needs_redis_cache(self):
        for what, args, env in (
                ("--cache-local", ["--cache-local"], None),
                ("--cache-local --no-redis-cache", ["--cache-local", "--no-redis-cache"], None),
                ("SUTLAB_CACHE_LOCAL=1", [], {"SUTLAB_CACHE_LOCAL": "1"})):
            with self.subTest(what):
                port = free_port()
                rc, out, err = run_cli(["serve", "--listen", "127.0.0.1:%d" % port, "--workers", "1",
                                        "--redis-url", "redis://127.0.0.1:1/0"] + args, env=env, timeout=10)
                self.assertIsNotNone(rc, "%s without --redis-cache: still running after 10 s (it served)" % what)
                self.assertEqual(rc, 2, "%s: exit %s, stderr %r" % (what, rc, err))
                self.assertIn("--cache-local", err)
                self.assertIn("--redis-cache", err)
                self.assertTrue(port_is_free(port), "%s: something listens on %d" % (what, port))


if __name__ == "__main__":
    unittest.main()
