#!/usr/bin/python3
"""Integration tests: the admin listener (--admin-listen, docs/admin-api.md).

Absent unless asked for and never on the public listener; every request without the right bearer
token is 401; live flags change under load with no failed request and the new behaviour shows in
the responses within a second; fault rules one by one (latency within 10 %, an error rate within a
binomial bound over 1,000 requests, resets seen by the client, readiness held down and released);
the sutlab_fault_* families and sutlab_build_info follow each change.

Run under loadscripts/sutlab_lab/services/with-services: the readiness test needs a PostgreSQL that answers.
"""

import http.client
import json
import math
import os
import re
import socket
import tempfile
import threading
import time
import unittest

import pgtest
from test_delivery import json_headers, make_session, redis_cli, redis_url
from sutlab_testlib import Server, assert_usage_error, free_port, migrate_and_seed, parse_metrics, run_cli

TOKEN = "t0k3n-for-the-admin-tests-0123456789"
NO_DB = ["--db-url", "postgresql://nobody@127.0.0.1:1/none"]


class Admin:
    """A server with the admin listener on a port of its own, and a docroot with a compressible file."""

    def __init__(self, extra=(), workers=2, db_url=None):
        self.docroot = tempfile.mkdtemp(prefix="sutlab-admin-")
        with open(os.path.join(self.docroot, "big.txt"), "w") as f:
            f.write("sutlab admin listener test line\n" * 200)
        self.admin_port = free_port()
        self.srv = Server(workers=workers, docroot=self.docroot,
                          extra_args=(["--db-url", db_url] if db_url else NO_DB) + ["--admin-listen", ":%d" % self.admin_port,
                                                  "--admin-token", TOKEN] + list(extra))

    def __enter__(self):
        self.srv.__enter__()
        return self

    def __exit__(self, *exc):
        return self.srv.__exit__(*exc)

    def call(self, method, path, body=None, token=TOKEN, headers=None):
        h = dict(headers or {})
        if token is not None:
            h["Authorization"] = "Bearer " + token
        data = json.dumps(body) if isinstance(body, (dict, list)) else body
        status, headers, raw = self.srv.request(method, path, body=data, headers=h, port=self.admin_port)
        return status, headers, (json.loads(raw) if raw else None)


class Load(threading.Thread):
    """One keep-alive client asking `path` in a loop; keeps (time, status, headers, body)."""

    def __init__(self, port, path, headers=None):
        super().__init__(daemon=True)
        self.port, self.path, self.headers = port, path, headers or {}
        self.seen, self.failures = [], []
        self.stop = threading.Event()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        while not self.stop.is_set():
            try:
                conn.request("GET", self.path, headers=self.headers)
                r = conn.getresponse()
                body = r.read()
                self.seen.append((time.monotonic(), r.status, {k.lower(): v for k, v in r.getheaders()}, body))
                if r.status != 200:
                    self.failures.append(r.status)
            except (OSError, http.client.HTTPException) as e:
                self.failures.append(repr(e))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.close()

    def finish(self):
        self.stop.set()
        self.join(15)

    def first_after(self, t, pred):
        """Seconds from t to the first response after t for which pred holds (and holds after)."""
        later = [s for s in self.seen if s[0] >= t]
        for i, s in enumerate(later):
            if all(pred(x) for x in later[i:]):
                return s[0] - t
        return None


def metric(text, name, **labels):
    """The sample of `name` with exactly `labels` in a /metrics text."""
    v = parse_metrics(text, check=False).get_value(name, **labels)
    if v is None:
        raise AssertionError("no %s%s in /metrics" % (name, labels))
    return v


class Presence(unittest.TestCase):
    def test_absent_unless_asked_for(self):
        with Server(workers=1, extra_args=NO_DB) as srv:
            self.assertNotIn("admin on", srv.stderr())
            status, _, body = srv.request("GET", "/admin", headers={"Authorization": "Bearer " + TOKEN})
            self.assertEqual(status, 404, body)

    def test_never_on_the_public_listener(self):
        with Admin() as a:
            status, _, _ = a.srv.request("GET", "/admin", headers={"Authorization": "Bearer " + TOKEN})
            self.assertEqual(status, 404)
            self.assertIn("(admin on 127.0.0.1:%d)" % a.admin_port, a.srv.stderr())  # loopback for :PORT

    def test_refused_command_lines(self):
        assert_usage_error(self, ["serve", "--admin-listen", ":1"], "--admin-listen", "--admin-token")
        assert_usage_error(self, ["serve", "--admin-token", TOKEN], "--admin-listen")
        assert_usage_error(self, ["serve", "--admin-listen", ":1", "--admin-token", "short"], "--admin-token",
                           "16 bytes")

    def test_token_file_first_line(self):
        with tempfile.NamedTemporaryFile("w", suffix=".token", delete=False) as f:
            f.write(TOKEN + "\nsecond line ignored\n")
        try:
            port = free_port()
            with Server(workers=1, extra_args=NO_DB + ["--admin-listen", "127.0.0.1:%d" % port,
                                                       "--admin-token-file", f.name]) as srv:
                status, _, _ = srv.request("GET", "/admin", port=port, headers={"Authorization": "Bearer " + TOKEN})
                self.assertEqual(status, 200)
            rc, _, err = run_cli(["serve", "--admin-listen", ":%d" % free_port(), "--admin-token-file",
                                  f.name + ".missing"], timeout=10)
            self.assertEqual(rc, 2, err)
            self.assertIn("--admin-token-file", err)
        finally:
            os.unlink(f.name)


class Auth(unittest.TestCase):
    def test_missing_wrong_or_other_scheme_is_401(self):
        wrong = TOKEN[:-1] + ("x" if TOKEN[-1] != "x" else "y")  # same length, last byte differs
        with Admin() as a:
            for how, kw in [("missing", {"token": None}), ("wrong", {"token": wrong}),
                            ("shorter", {"token": TOKEN[:-1]}), ("longer", {"token": TOKEN + "0"}),
                            ("basic", {"token": None, "headers": {"Authorization": "Basic " + TOKEN}})]:
                with self.subTest(how):
                    status, headers, body = a.call("PUT", "/admin/flags/gzip", {"value": "on"}, **kw)
                    self.assertEqual(status, 401, body)
                    self.assertIn("bearer", headers.get("www-authenticate", "").lower())
                    self.assertIn("token", body["errors"])
            status, _, state = a.call("GET", "/admin")
            self.assertEqual(status, 200)
            self.assertEqual(state["flags"]["gzip"], "off")  # none of the refused requests changed it


class LiveFlags(unittest.TestCase):
    def test_gzip_on_under_load(self):
        with Admin() as a:
            load = Load(a.srv.port, "/big.txt", {"Accept-Encoding": "gzip"})
            load.start()
            time.sleep(0.5)
            t = time.monotonic()
            status, _, body = a.call("PUT", "/admin/flags/gzip", {"value": "on"})
            self.assertEqual((status, body), (200, {"flag": "gzip", "value": "on"}))
            time.sleep(1.0)
            load.finish()
            self.assertEqual(load.failures, [])
            self.assertTrue(any(s[0] < t and "content-encoding" not in s[2] for s in load.seen))
            took = load.first_after(t, lambda s: s[2].get("content-encoding") == "gzip")
            self.assertIsNotNone(took, "gzip never took over")
            self.assertLess(took, 1.0)
            m = a.srv.request("GET", "/metrics")[2].decode()
            self.assertIn("--gzip=on", re.search(r'sutlab_build_info\{[^}]*\}', m).group(0))

    def test_handler_mode_and_app_cpu_under_load(self):
        with Admin() as a:
            load = Load(a.srv.port, "/work/sleep?ms=1")
            load.start()
            time.sleep(0.5)
            t = time.monotonic()
            self.assertEqual(a.call("PUT", "/admin/flags/handler-mode", {"value": "inline"})[0], 200)
            self.assertEqual(a.call("PUT", "/admin/flags/app-cpu-us", {"value": 20000})[0], 200)
            time.sleep(1.0)
            load.finish()
            self.assertEqual(load.failures, [])
            self.assertTrue(any(s[0] < t and json.loads(s[3])["mode"] == "offload" for s in load.seen))
            took = load.first_after(t, lambda s: json.loads(s[3])["mode"] == "inline")
            self.assertIsNotNone(took)
            self.assertLess(took, 1.0)

            def app_ms(s):
                return float(re.search(r"app;dur=([\d.]+)", s[2]["server-timing"]).group(1))
            took = load.first_after(t, lambda s: app_ms(s) >= 20.0)
            self.assertIsNotNone(took, [app_ms(s) for s in load.seen[-5:]])
            self.assertLess(took, 1.0)

    def test_count_pagination_under_load(self):
        # without the count, articlesCount says only "one more page" (offset + limit + 1); with it,
        # the exact total
        url = pgtest.fresh_database(self)
        migrate_and_seed(url, "tiny")
        total = int(pgtest.scalar(url, "SELECT count(*) FROM articles"))
        self.assertGreater(total, 2)
        with Admin(db_url=url) as a:
            load = Load(a.srv.port, "/api/articles?limit=1")
            load.start()
            time.sleep(0.5)
            t = time.monotonic()
            self.assertEqual(a.call("PUT", "/admin/flags/count-pagination", {"value": True})[0], 200)
            time.sleep(1.0)
            load.finish()
            self.assertEqual(load.failures, [])
            counts = [(s[0] < t, json.loads(s[3])["articlesCount"]) for s in load.seen]
            self.assertTrue(counts and all(c == 2 for before, c in counts if before), counts[:5])
            took = load.first_after(t, lambda s: json.loads(s[3])["articlesCount"] == total)
            self.assertIsNotNone(took)
            self.assertLess(took, 1.0)

    def test_db_latency_both_db_modes(self):
        url = pgtest.fresh_database(self)
        migrate_and_seed(url, "tiny")

        def median_ms(a):
            times = []
            for _ in range(3):
                t0 = time.monotonic()
                self.assertEqual(a.srv.request("GET", "/api/tags")[0], 200)  # one query
                times.append((time.monotonic() - t0) * 1000)
            return sorted(times)[1]
        # the bounds are the injected delay's: none is under one delay (whatever the machine's speed),
        # one query's is at least one and under two; the medians are printed
        delay = 300
        for mode in ("async", "sync"):
            with self.subTest(mode=mode), Admin(db_url=url, extra=["--db-mode", mode]) as a:
                before = median_ms(a)
                self.assertLess(before, delay)
                self.assertEqual(a.call("PUT", "/admin/flags/db-latency-ms", {"value": delay})[0], 200)
                held = median_ms(a)
                self.assertGreaterEqual(held, delay)
                self.assertLess(held, 2 * delay, "the round trip is one query's")
                self.assertEqual(a.call("PUT", "/admin/flags/db-latency-ms", {"value": 0})[0], 200)
                after = median_ms(a)
                self.assertLess(after, delay)
                print("--db-mode %s: GET /api/tags %.1f ms, %.1f ms with --db-latency-ms %d, %.1f ms after"
                      % (mode, before, held, delay, after))

    def test_keepalive_timeout_reaches_idle_connections(self):
        with Admin() as a:
            s = socket.create_connection(("127.0.0.1", a.srv.port), timeout=10)
            s.sendall(b"GET /health_check HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertIn(b"200", s.recv(4096))
            t = time.monotonic()
            self.assertEqual(a.call("PUT", "/admin/flags/keepalive-timeout", {"value": 1})[0], 200)
            self.assertEqual(s.recv(4096), b"")  # closed by the server, well before the 10 s it began with
            self.assertLess(time.monotonic() - t, 3.0)
            s.close()

    def test_log_turned_on_and_off(self):
        log = os.path.join(tempfile.mkdtemp(prefix="sutlab-admin-log-"), "access.log")
        with Admin(extra=["--log-file", log]) as a:
            self.assertEqual(a.srv.request("GET", "/health_check?before=1")[0], 200)
            self.assertEqual(a.call("PUT", "/admin/flags/log", {"value": "access"})[0], 200)
            self.assertEqual(a.srv.request("GET", "/health_check?during=1")[0], 200)
            time.sleep(0.5)  # access lines are flushed every 100 ms
            self.assertEqual(a.call("PUT", "/admin/flags/log", {"value": "off"})[0], 200)
            time.sleep(0.3)
            self.assertEqual(a.srv.request("GET", "/health_check?after=1")[0], 200)
            time.sleep(0.5)
        with open(log) as f:
            text = f.read()
        self.assertIn("/health_check?during=1", text)
        self.assertNotIn("before=1", text)
        self.assertNotIn("after=1", text)

    def test_refusals(self):
        with Admin() as a:
            status, _, body = a.call("PUT", "/admin/flags/workers", {"value": 4})
            self.assertEqual(status, 409)
            self.assertIn("needs a restart", body["errors"]["flag"][0])
            self.assertEqual(a.call("PUT", "/admin/flags/nope", {"value": "on"})[0], 404)
            self.assertEqual(a.call("PUT", "/admin/flags/app-cpu-us", {"value": -1})[0], 422)
            self.assertEqual(a.call("PUT", "/admin/flags/app-cpu-us", {"value": [1]})[0], 422)
            self.assertEqual(a.call("PUT", "/admin/flags/gzip", "not json")[0], 422)
            self.assertEqual(a.call("GET", "/admin/flags/gzip")[0], 405)
            self.assertEqual(a.call("GET", "/admin/nowhere")[0], 404)
            self.assertEqual(a.call("POST", "/admin/faults", "x" * 20000)[0], 413)
            state = a.call("GET", "/admin")[2]
            self.assertEqual(state["flags"]["app-cpu-us"], 0)
            self.assertIn("workers", state["restart_only"])


class LiveCache(unittest.TestCase):
    REDIS_DB = 9  # apart from test_delivery's

    def test_redis_cache_on_under_load_and_no_stale_entry_after_a_write_made_while_off(self):
        url = pgtest.fresh_database(self)
        migrate_and_seed(url, "tiny")
        redis_cli(self.REDIS_DB, "FLUSHDB")
        sid, owner, cat = (int(x) for x in pgtest.scalar(
            url, "SELECT id || '|' || owner_id || '|' || category_id FROM stores ORDER BY id LIMIT 1").split("|"))
        listing = "/stores?categoryId=%d" % cat
        with Admin(db_url=url, extra=["--redis-url", redis_url(self.REDIS_DB)]) as a:
            load = Load(a.srv.port, listing)
            load.start()
            time.sleep(0.5)
            t = time.monotonic()
            self.assertEqual(a.call("PUT", "/admin/flags/redis-cache", {"value": "on"})[0], 200)
            time.sleep(1.0)
            load.finish()
            self.assertEqual(load.failures, [])
            self.assertTrue(any(s[0] < t and s[2].get("x-cache") == "BYPASS" for s in load.seen))
            took = load.first_after(t, lambda s: s[2].get("x-cache") in ("HIT", "MISS"))
            self.assertIsNotNone(took)
            self.assertLess(took, 1.0)
            self.assertEqual(a.srv.request("GET", listing)[1].get("x-cache"), "HIT")
            self.assertEqual(json.loads(a.srv.request("GET", "/readyz")[2])["redis"], "ok")
            # off, a write, on again: the write's invalidation went to Redis while the flag was off
            self.assertEqual(a.call("PUT", "/admin/flags/redis-cache", {"value": "off"})[0], 200)
            self.assertEqual(json.loads(a.srv.request("GET", "/readyz")[2])["redis"], "disabled")
            before = [x for x in json.loads(a.srv.request("GET", listing)[2]) if x["id"] == sid][0]["openStatus"]
            after, verb = ("CLOSED", "closed") if before == "OPENED" else ("OPENED", "opened")
            token = make_session(url, owner)
            status, _, body = a.srv.request("PATCH", "/stores/%d/%s" % (sid, verb), body="{}",
                                            headers=json_headers(token))
            self.assertEqual(status, 200, body)
            self.assertEqual(a.call("PUT", "/admin/flags/redis-cache", {"value": "on"})[0], 200)
            status, headers, body = a.srv.request("GET", listing)
            self.assertEqual(headers.get("x-cache"), "MISS")
            mine = [x for x in json.loads(body) if x["id"] == sid]
            self.assertEqual([x["openStatus"] for x in mine], [after], "a stale entry from before the write")


    def test_cache_local_on_then_off(self):
        url = pgtest.fresh_database(self)
        migrate_and_seed(url, "tiny")
        redis_cli(self.REDIS_DB, "FLUSHDB")
        cat = int(pgtest.scalar(url, "SELECT category_id FROM stores ORDER BY id LIMIT 1"))
        listing = "/stores?categoryId=%d" % cat

        def local_hits(a):
            m = a.srv.request("GET", "/metrics")[2].decode()
            return sum(float(ln.split()[-1]) for ln in m.splitlines() if ln.startswith("cache_local_hits_total"))

        def hits_after(a, n=20):
            before = local_hits(a)
            for _ in range(n):
                self.assertEqual(a.srv.request("GET", listing)[1].get("x-cache"), "HIT")
            return local_hits(a) - before
        with Admin(db_url=url, workers=1, extra=["--redis-url", redis_url(self.REDIS_DB), "--redis-cache"]) as a:
            a.srv.request("GET", listing)  # MISS: now in Redis
            self.assertEqual(hits_after(a), 0)  # every hit from Redis
            self.assertEqual(a.call("PUT", "/admin/flags/cache-local", {"value": "on"})[0], 200)
            a.srv.request("GET", listing)  # from Redis, and kept
            time.sleep(0.3)  # the copy is trusted once tracking is confirmed
            self.assertGreaterEqual(hits_after(a), 15)  # from the worker's copy
            self.assertEqual(a.call("PUT", "/admin/flags/cache-local", {"value": "off"})[0], 200)
            self.assertEqual(hits_after(a), 0)


class Faults(unittest.TestCase):
    def test_latency_added_once(self):
        """A latency rule delays each matching request by its latency once (at least 300 ms, under
        two of them) and no other request (under one): bounds of the rule's own, whatever the
        machine's speed; the median is printed."""
        with Admin() as a:
            status, _, rule = a.call("POST", "/admin/faults", {"match": "/work/*", "latency_ms": 300})
            self.assertEqual(status, 201, rule)
            times = []
            for _ in range(9):
                t0 = time.monotonic()
                self.assertEqual(a.srv.request("GET", "/work/sleep?ms=0")[0], 200)
                times.append((time.monotonic() - t0) * 1000)
            times.sort()
            self.assertGreaterEqual(times[0], 300)
            self.assertLess(times[4], 2 * 300, times)
            t0 = time.monotonic()
            self.assertEqual(a.srv.request("GET", "/health_check")[0], 200)  # no rule matches
            unmatched = time.monotonic() - t0
            self.assertLess(unmatched, 0.3)
            print("latency rule of 300 ms: median %.1f ms; an unmatched request %.1f ms" % (times[4], unmatched * 1000))
            self.assertEqual(a.call("DELETE", "/admin/faults/%d" % rule["id"])[0], 204)
            self.assertEqual(a.call("DELETE", "/admin/faults/%d" % rule["id"])[0], 404)
            m = a.srv.request("GET", "/metrics")[2].decode()
            self.assertEqual(metric(m, "sutlab_fault_injected_total", kind="latency"), 9)
            self.assertEqual(metric(m, "sutlab_fault_rules"), 0)

    def test_error_rate_within_a_binomial_bound(self):
        n, p = 1000, 0.3
        with Admin() as a:
            status, _, rule = a.call("POST", "/admin/faults", {"match": "/work/*", "error_rate": p, "status": 502})
            self.assertEqual(status, 201, rule)
            conn = http.client.HTTPConnection("127.0.0.1", a.srv.port, timeout=10)
            codes = {}
            for _ in range(n):
                conn.request("GET", "/work/sleep?ms=0")
                r = conn.getresponse()
                body = r.read()
                codes[r.status] = codes.get(r.status, 0) + 1
                if r.status == 502:
                    self.assertIn("fault", json.loads(body)["errors"])
            conn.close()
            self.assertEqual(set(codes), {200, 502})
            self.assertLess(abs(codes[502] - n * p), 5 * math.sqrt(n * p * (1 - p)), codes)
            m = a.srv.request("GET", "/metrics")[2].decode()
            self.assertEqual(metric(m, "sutlab_fault_injected_total", kind="error"), codes[502])

    def test_reset_seen_by_the_client(self):
        with Admin() as a:
            self.assertEqual(a.call("POST", "/admin/faults", {"match": "/work/sleep", "reset_rate": 1})[0], 201)
            with socket.create_connection(("127.0.0.1", a.srv.port), timeout=10) as s:
                s.sendall(b"GET /work/sleep?ms=0 HTTP/1.1\r\nHost: x\r\n\r\n")
                with self.assertRaises(ConnectionResetError):
                    while s.recv(4096):
                        pass
            self.assertEqual(a.srv.request("GET", "/health_check")[0], 200)  # the server goes on
            self.assertEqual(a.call("DELETE", "/admin/faults")[0], 200)
            self.assertEqual(a.srv.request("GET", "/work/sleep?ms=0")[0], 200)

    def test_readiness_held_down_then_released(self):
        url = pgtest.fresh_database(self)
        migrate_and_seed(url, "tiny")
        with Admin(db_url=url) as a:
            deadline = time.monotonic() + 10  # the pool's first connection
            while a.srv.request("GET", "/readyz")[0] != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            self.assertEqual(a.srv.request("GET", "/readyz")[0], 200)
            self.assertEqual(a.call("PUT", "/admin/ready", {"ready": False})[0], 200)
            status, _, body = a.srv.request("GET", "/readyz")
            self.assertEqual(status, 503)
            self.assertEqual(json.loads(body)["admin"], "held down")
            m = a.srv.request("GET", "/metrics")[2].decode()
            self.assertEqual(metric(m, "sutlab_fault_ready_forced_down"), 1)
            self.assertEqual(a.call("PUT", "/admin/ready", {"ready": True})[0], 200)
            self.assertEqual(a.srv.request("GET", "/readyz")[0], 200)
            self.assertEqual(a.call("PUT", "/admin/ready", {"ready": "no"})[0], 422)

    def test_bad_rules_are_422(self):
        with Admin() as a:
            for rule in [{"latency_ms": 5}, {"match": "/a"}, {"match": "/a", "error_rate": 2},
                         {"match": "/a", "latency_ms": 5, "extra": 1}, "[]"]:
                with self.subTest(rule=rule):
                    status, _, body = a.call("POST", "/admin/faults", rule)
                    self.assertEqual(status, 422, body)
            self.assertEqual(a.call("GET", "/admin")[2]["faults"], [])


if __name__ == "__main__":
    unittest.main()
