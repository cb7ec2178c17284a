#!/usr/bin/python3
"""Integration tests: the delivery app (make-delivery store listing) against real PostgreSQL and Redis.

Run under loadscripts/sutlab_lab/services/with-services (SUTLAB_TEST_DB_URL, SUTLAB_TEST_REDIS_URL ...). Every test
class works in a database of its own (migrated, seeded with `--size tiny`) and a Redis db number of
its own, flushed before every test. Expected values come from the README's endpoint table and from the rows PostgreSQL
holds (read with psql), never from an earlier server answer.

The main scenarios run for --db-mode async and sync, each with --redis-cache on and off.
The helpers at the top are shared with test_data_faults.py.
"""

import json
import os
import re
import subprocess
import threading
import time
import unittest
import urllib.parse

from pgtest import FreshDatabase, psql, scalar, server_url
from sutlab_testlib import (Metrics, Server, build_request, check_histograms, media_type,
                            migrate_and_seed, parse_metrics, stop_class_server)

CLIENT_TIMEOUT = 5.0
STORE_FIELDS = {"id": int, "name": str, "phone": str, "address": str, "ownerId": int,
                "openStatus": str, "introduction": str, "categoryId": int}
MENU_FIELDS = {"id": int, "name": str, "price": int, "description": str}
STORE_JSON_SQL = ("json_build_object('id', s.id, 'name', s.name, 'phone', s.phone, 'address', s.address,"
                  " 'ownerId', s.owner_id, 'openStatus', s.open_status, 'introduction', s.introduction,"
                  " 'categoryId', s.category_id)")
CACHE_KEY = "sutlab:stores:category:%d"


# ----------------------------------------------------------------------------------------------
# Services


def redis_port():
    port = os.environ.get("SUTLAB_TEST_REDIS_PORT")
    if not port:
        raise unittest.SkipTest("SUTLAB_TEST_REDIS_PORT is not set "
                                "(run under loadscripts/sutlab_lab/services/with-services)")
    return int(port)


def redis_url(db):
    return "redis://127.0.0.1:%d/%d" % (redis_port(), db)


def redis_cli(db, *args, timeout=5, check=True):
    """Runs redis-cli against the harness's Redis, database `db`; returns stdout minus the final newline."""
    proc = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(redis_port()), "-n", str(db)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    out = proc.stdout.decode("utf-8", "replace")
    if check and (proc.returncode != 0 or out.startswith("ERR") or out.startswith("Could not connect")):
        raise AssertionError("redis-cli %r failed (%d): %s %s" % (args, proc.returncode, out, proc.stderr))
    return out[:-1] if out.endswith("\n") else out


def sql_literal(s):
    return "'" + s.replace("'", "''") + "'"


def db_json(url, sql):
    """The single JSON value `sql` returns."""
    return json.loads(scalar(url, sql))


def db_categories(url):
    return db_json(url, "SELECT coalesce(json_agg(json_build_object('id', id, 'name', name) ORDER BY id), '[]')"
                        " FROM store_categories")


def db_listing(url, category, address=None):
    where = "s.category_id = %d" % category
    if address is not None:
        where += " AND s.address = %s" % sql_literal(address)
    return db_json(url, "SELECT coalesce(json_agg(%s ORDER BY s.id), '[]') FROM stores s WHERE %s"
                   % (STORE_JSON_SQL, where))


def db_store(url, store_id):
    """The store's row as API JSON plus its menus (sorted by id), or None."""
    doc = db_json(url, "SELECT coalesce((SELECT %s FROM stores s WHERE s.id = %d), 'null')" % (STORE_JSON_SQL, store_id))
    if doc is None:
        return None
    doc["menus"] = db_json(url, "SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'price', price,"
                                " 'description', description) ORDER BY id), '[]') FROM menus WHERE store_id = %d"
                           % store_id)
    return doc


def db_store_row(url, store_id):
    """Everything of a stores row (timestamps included) as text, to prove it was not touched."""
    return scalar(url, "SELECT row_to_json(s)::text FROM stores s WHERE id = %d" % store_id)


def db_count(url, sql_from_where="stores"):
    return int(scalar(url, "SELECT count(*) FROM " + sql_from_where))


def make_session(url, user_id, revoked=False):
    """A session row for user_id; returns the client token (64 hex chars)."""
    token = os.urandom(32).hex()
    psql(url, "INSERT INTO sessions (token_hash, user_id, revoked_at) VALUES (sha256(decode('%s', 'hex')), %d, %s)"
         % (token, user_id, "now()" if revoked else "NULL"))
    return token


def auth(token):
    return {"Authorization": "Token " + token}


def json_headers(token=None):
    h = {"Content-Type": "application/json"}
    if token:
        h.update(auth(token))
    return h


class Env:
    """A fresh database (migrated + seeded tiny), a Redis db number, and a sutlab serving both."""

    def __init__(self, redis_db, mode="async", cache=False, ttl=None, workers=1, extra=(), local=False):
        self.redis_db = redis_db
        self.mode = mode
        self.cache = cache
        self.local = local
        self.db = FreshDatabase(prefix="sutlab_dl")
        self.url = None
        self.srv = None
        args = ["--db-mode", mode, "--redis-url", redis_url(redis_db)]
        if cache:
            args.append("--redis-cache")
        if ttl is not None:
            args += ["--cache-ttl", str(ttl)]
        if local:
            args.append("--cache-local")
        self.args = args + list(extra)
        self.workers = workers

    def start(self):
        server_url()
        redis_port()
        self.url = self.db.create()
        migrate_and_seed(self.url, timeout=120)
        self.flush()
        # ready: /readyz, PostgreSQL and Redis reached (the time /health_check and /readyz had
        # one after the other)
        self.srv = Server(extra_args=["--db-url", self.url] + self.args, workers=self.workers,
                          ready_path="/readyz", start_timeout=20.0)
        self.srv.start()
        return self

    def flush(self):
        redis_cli(self.redis_db, "FLUSHDB")

    def finish(self):
        """Stops the server (must exit 0 with no sanitizer report), drops the database."""
        stop_class_server(self.srv, db=self.db)

    # -- HTTP

    def req(self, method, path, body=None, headers=None, timeout=CLIENT_TIMEOUT):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        return self.srv.request(method, path, body=body, headers=headers, timeout=timeout)

    def get(self, path, **kw):
        return self.req("GET", path, **kw)

    def listing(self, category, address=None):
        q = {"categoryId": str(category)}
        if address is not None:
            q["address"] = address
        return self.get("/stores?" + urllib.parse.urlencode(q, quote_via=urllib.parse.quote))


def body_json(tc, status_headers_body):
    status, headers, body = status_headers_body
    tc.assertEqual(media_type(headers.get("content-type")), "application/json",
                   "not JSON: %d %r %r" % (status, headers, body[:300]))
    try:
        return json.loads(body)
    except ValueError:
        tc.fail("body is not JSON: %d %r" % (status, body[:300]))


def assert_error(tc, resp, status, fields=None, exact=True, what=""):
    """resp is `status` with {"errors": {field: [message, ...]}}; fields: the keys expected."""
    tc.assertEqual(resp[0], status, "%s: expected %d, got %d %r" % (what, status, resp[0], resp[2][:400]))
    doc = body_json(tc, resp)
    tc.assertIsInstance(doc, dict, what)
    tc.assertIn("errors", doc, "%s: %r" % (what, doc))
    errors = doc["errors"]
    tc.assertIsInstance(errors, dict, what)
    tc.assertTrue(errors, "%s: empty errors object" % what)
    for k, v in errors.items():
        tc.assertIsInstance(v, list, "%s: errors.%s not a list: %r" % (what, k, doc))
        tc.assertTrue(v and all(isinstance(m, str) and m for m in v), "%s: errors.%s: %r" % (what, k, doc))
    if fields is not None:
        if exact:
            tc.assertEqual(set(errors), set(fields), "%s: error fields %r" % (what, doc))
        else:
            tc.assertTrue(set(fields) <= set(errors), "%s: error fields %r" % (what, doc))
    return errors


def assert_store_shape(tc, store, menus=False):
    expected = dict(STORE_FIELDS)
    if menus:
        expected["menus"] = list
    tc.assertEqual(set(store), set(expected), "store fields: %r" % store)
    for k, t in expected.items():
        tc.assertIs(type(store[k]), t, "store.%s has type %s: %r" % (k, type(store[k]).__name__, store))
    tc.assertIn(store["openStatus"], ("OPENED", "CLOSED"))
    if menus:
        for m in store["menus"]:
            tc.assertEqual(set(m), set(MENU_FIELDS), "menu fields: %r" % m)
            for k, t in MENU_FIELDS.items():
                tc.assertIs(type(m[k]), t, "menu.%s: %r" % (k, m))


_TIMING = re.compile(r"(?:^|,)\s*(db|cache|app)\s*;\s*dur=\"?([0-9]+(?:\.[0-9]+)?)\"?")


def server_timing(headers):
    """{"db": ms, "cache": ms, "app": ms} from Server-Timing (missing entries absent)."""
    return {m.group(1): float(m.group(2)) for m in _TIMING.finditer(headers.get("server-timing", ""))}


def scrape(env, prefixes=("db_", "cache_")):
    """/metrics samples of the families starting with `prefixes`, as a sutlab_testlib.Metrics.

    Lenient on purpose (parse_metrics with check=False): other families' format problems are the
    business of a test of their own (test_metrics_exposition_valid), not of the delta checks here.
    """
    status, _, body = env.get("/metrics")
    if status != 200:
        raise AssertionError("GET /metrics -> %d" % status)
    whole = parse_metrics(body.decode(), check=False)
    m = Metrics((key, v) for key, v in whole.items() if key[0].startswith(prefixes))
    m.types = {fam: typ for fam, typ in whole.types.items() if fam.startswith(prefixes)}
    return m


# ----------------------------------------------------------------------------------------------
# The main scenarios, for every (db mode, cache) combination


def invalid_creates(good, categories):
    """(body, the fields its 422 names) of POST /stores bodies that are JSON objects but invalid:
    `good` with a field missing, of the wrong type or out of range, or a category that does not exist."""
    def without(k):
        d = dict(good)
        del d[k]
        return d

    return [
        ({}, {"name", "phone", "address", "categoryId"}),
        (without("name"), {"name"}),
        (without("phone"), {"phone"}),
        (without("address"), {"address"}),
        (without("categoryId"), {"categoryId"}),
        (dict(good, name=5), {"name"}),
        (dict(good, name=""), {"name"}),
        (dict(good, name=None), {"name"}),
        (dict(good, name=["x"]), {"name"}),
        (dict(good, phone=123), {"phone"}),
        (dict(good, address={"city": "x"}), {"address"}),
        (dict(good, introduction=5), {"introduction"}),
        (dict(good, name="x" * 101), {"name"}),
        (dict(good, categoryId="abc"), {"categoryId"}),
        (dict(good, categoryId="1"), {"categoryId"}),
        (dict(good, categoryId=0), {"categoryId"}),
        (dict(good, categoryId=-3), {"categoryId"}),
        (dict(good, categoryId=1.5), {"categoryId"}),
        (dict(good, categoryId=None), {"categoryId"}),
        (dict(good, categoryId=True), {"categoryId"}),
        (dict(good, name=5, categoryId="x"), {"name", "categoryId"}),
        (dict(good, categoryId=999999), {"categoryId"}),           # no such category
        (dict(good, categoryId=max(categories) + 1), {"categoryId"}),
        ({"store": dict(good, name=5)}, {"name"}),
    ]


def malformed_creates(good):
    """(raw body, Content-Type, the statuses allowed) of POST /stores bodies that are no JSON object
    or no JSON at all."""
    return [
        (b'{"name": "x",', "application/json", (400,)),
        (b'{"name": "x"} trailing', "application/json", (400,)),
        (b"", "application/json", (400,)),
        (b"\xff\xfe{}", "application/json", (400,)),
        (b"[1, 2]", "application/json", (400, 422)),
        (b"[" + json.dumps(good).encode() + b"]", "application/json", (400, 422)),
        (b'"a string"', "application/json", (400, 422)),
        (b"null", "application/json", (400, 422)),
        (json.dumps(good).encode(), "text/plain", (415,)),
        (json.dumps(good).encode(), "application/x-www-form-urlencoded", (415,)),
        (b"name=x&phone=1", "application/x-www-form-urlencoded", (415,)),
    ]


class DeliveryScenarios:
    MODE = "async"
    CACHE = False
    LOCAL = False  # --cache-local (only with CACHE)
    REDIS_DB = 1
    TTL = 60
    WORKERS = 1

    @classmethod
    def setUpClass(cls):
        cls.env = Env(cls.REDIS_DB, mode=cls.MODE, cache=cls.CACHE, ttl=cls.TTL, workers=cls.WORKERS,
                      local=cls.LOCAL)
        try:
            cls.env.start()
        except BaseException:
            cls.env.finish()
            raise
        cls.url = cls.env.url
        cls.categories = [c["id"] for c in db_categories(cls.url)]
        cls.max_store = int(scalar(cls.url, "SELECT max(id) FROM stores"))

    @classmethod
    def tearDownClass(cls):
        cls.env.finish()

    def setUp(self):
        self.env.flush()  # every test starts with an empty cache

    def x_cache(self, resp):
        return resp[1].get("x-cache")

    def expect_fresh(self, resp, what=""):
        """A listing answered from PostgreSQL: MISS with the cache, BYPASS without."""
        self.assertEqual(self.x_cache(resp), "MISS" if self.CACHE else "BYPASS", what)

    def owned_store(self, category=None, status=None):
        """(store id, owner id, category id) of a fixture store."""
        where = ["true"]
        if category is not None:
            where.append("category_id = %d" % category)
        if status is not None:
            where.append("open_status = %s" % sql_literal(status))
        r = scalar(self.url, "SELECT id || '|' || owner_id || '|' || category_id FROM stores WHERE %s"
                   " ORDER BY id LIMIT 1" % " AND ".join(where))
        return tuple(int(x) for x in r.split("|"))

    def other_user(self, owner):
        return int(scalar(self.url, "SELECT min(id) FROM users WHERE id <> %d" % owner))

    # -- reads

    def test_categories_equal_db(self):
        resp = self.env.get("/stores/categories")
        self.assertEqual(resp[0], 200, resp)
        doc = body_json(self, resp)
        expected = db_categories(self.url)
        self.assertEqual(len(expected), 5)
        self.assertEqual(doc, expected)
        for c in doc:
            self.assertIs(type(c["id"]), int)
            self.assertIs(type(c["name"]), str)

    def test_listing_every_category_equals_db(self):
        for cat in self.categories:
            resp = self.env.listing(cat)
            self.assertEqual(resp[0], 200, resp)
            self.expect_fresh(resp, "category %d" % cat)
            doc = body_json(self, resp)
            expected = db_listing(self.url, cat)
            self.assertTrue(expected)
            self.assertEqual(doc, expected, "category %d" % cat)
            for s in doc:
                assert_store_shape(self, s)
            self.assertEqual([s["id"] for s in doc], sorted(s["id"] for s in doc))

    def test_listing_unknown_category_is_empty(self):
        for cat in (max(self.categories) + 1, 999999, 9223372036854775807):
            resp = self.env.listing(cat)
            self.assertEqual(resp[0], 200, "category %d: %r" % (cat, resp))
            self.assertEqual(body_json(self, resp), [], "category %d" % cat)

    def test_listing_by_address_equals_db(self):
        pairs = [(int(c), a) for c, a in (line.split("|", 1) for line in psql(
            self.url, "SELECT DISTINCT category_id, address FROM stores ORDER BY 1, 2").splitlines())]
        self.assertTrue(len(pairs) > 10)
        for cat, addr in pairs:
            resp = self.env.listing(cat, addr)
            self.assertEqual(resp[0], 200, resp)
            self.expect_fresh(resp, "%d %s" % (cat, addr))
            doc = body_json(self, resp)
            expected = db_listing(self.url, cat, addr)
            self.assertTrue(expected)
            self.assertEqual(doc, expected, "category %d address %r" % (cat, addr))
            for s in doc:
                assert_store_shape(self, s)
        # addresses that match nothing: unknown, a prefix (exact match only), another category's
        cat = self.categories[0]
        other = scalar(self.url, "SELECT address FROM stores WHERE address NOT IN"
                                 " (SELECT address FROM stores WHERE category_id = %d) LIMIT 1" % cat)
        for addr in ("Nowhere 1", "Seoul", other, "", "seoul gangnam-gu"):
            resp = self.env.listing(cat, addr)
            self.assertEqual(resp[0], 200, resp)
            self.assertEqual(body_json(self, resp), db_listing(self.url, cat, addr), "address %r" % addr)

    def test_listing_address_star_is_not_the_unfiltered_listing(self):
        """address=* is an ordinary (non-matching) address filter, whatever the cache layout."""
        cat_a, cat_b = self.categories[0], self.categories[1]
        # unfiltered first, then address=*
        r1 = self.env.listing(cat_a)
        self.assertEqual(body_json(self, r1), db_listing(self.url, cat_a))
        r2 = self.env.listing(cat_a, "*")
        self.assertEqual(r2[0], 200)
        self.assertEqual(body_json(self, r2), [],
                         "GET /stores?categoryId=%d&address=* (X-Cache %s) returned the unfiltered listing"
                         % (cat_a, self.x_cache(r2)))
        # address=* first, then unfiltered
        r3 = self.env.listing(cat_b, "*")
        self.assertEqual(body_json(self, r3), [])
        r4 = self.env.listing(cat_b)
        self.assertEqual(body_json(self, r4), db_listing(self.url, cat_b),
                         "GET /stores?categoryId=%d (X-Cache %s) after address=*" % (cat_b, self.x_cache(r4)))

    def test_listing_bad_category_id(self):
        for q in ("", "?categoryId=", "?categoryId=abc", "?categoryId=0", "?categoryId=1x", "?categoryId=-1",
                  "?categoryId=1.5", "?categoryId=%201", "?categoryId=99999999999999999999", "?address=x",
                  "?categoryid=1"):
            resp = self.env.get("/stores" + q)
            assert_error(self, resp, 422, ["categoryId"], exact=False, what="GET /stores" + q)

    def test_store_detail_equals_db(self):
        ids = sorted({1, 2, self.max_store // 2, self.max_store})
        for sid in ids:
            resp = self.env.get("/stores/%d" % sid)
            self.assertEqual(resp[0], 200, resp)
            doc = body_json(self, resp)
            assert_store_shape(self, doc, menus=True)
            expected = db_store(self.url, sid)
            self.assertTrue(expected["menus"], "fixture store %d has menus" % sid)
            got = dict(doc)
            got["menus"] = sorted(doc["menus"], key=lambda m: m["id"])
            self.assertEqual(got, expected, "store %d" % sid)

    def test_store_without_menus(self):
        owner = int(scalar(self.url, "SELECT min(id) FROM users"))
        sid = int(scalar(self.url, "INSERT INTO stores (name, phone, address, owner_id, introduction, category_id)"
                                   " VALUES ('No Menu Yet', '010-0000-0000', 'Test Street 1', %d, 'intro', %d)"
                                   " RETURNING id" % (owner, self.categories[-1])))
        resp = self.env.get("/stores/%d" % sid)
        self.assertEqual(resp[0], 200, resp)
        doc = body_json(self, resp)
        assert_store_shape(self, doc, menus=True)
        self.assertEqual(doc["menus"], [])
        self.assertEqual(doc, db_store(self.url, sid))

    def test_unknown_store_404(self):
        for path in ("/stores/%d" % (self.max_store + 1000), "/stores/0", "/stores/abc", "/stores/-1",
                     "/stores/99999999999999999999"):
            assert_error(self, self.env.get(path), 404, what="GET " + path)

    def test_wrong_method_405(self):
        for method, path in (("DELETE", "/stores/1"), ("PUT", "/stores/1/opened"), ("GET", "/stores/1/closed"),
                             ("POST", "/stores/categories")):
            resp = self.env.req(method, path, body=b"{}" if method in ("PUT", "POST") else None,
                                headers=json_headers())
            self.assertEqual(resp[0], 405, "%s %s -> %r" % (method, path, resp))

    # -- the cache

    def test_x_cache_and_redis_entry(self):
        cat = self.categories[2]
        key = CACHE_KEY % cat
        addr = scalar(self.url, "SELECT address FROM stores WHERE category_id = %d ORDER BY id LIMIT 1" % cat)
        r1 = self.env.listing(cat)
        r2 = self.env.listing(cat)
        a1 = self.env.listing(cat, addr)
        a2 = self.env.listing(cat, addr)
        for r in (r1, r2, a1, a2):
            self.assertEqual(r[0], 200)
        self.assertEqual(body_json(self, r1), db_listing(self.url, cat))
        self.assertEqual(body_json(self, a1), db_listing(self.url, cat, addr))
        if not self.CACHE:
            for r in (r1, r2, a1, a2):
                self.assertEqual(self.x_cache(r), "BYPASS")
            self.assertEqual(r1[2], r2[2])
            self.assertEqual(redis_cli(self.env.redis_db, "EXISTS", key), "0", "cache off but Redis has %s" % key)
            return
        self.assertEqual([self.x_cache(r) for r in (r1, r2, a1, a2)], ["MISS", "HIT", "MISS", "HIT"])
        self.assertEqual(r2[2], r1[2], "HIT body differs from MISS body")
        self.assertEqual(a2[2], a1[2])
        self.assertEqual(media_type(r2[1].get("content-type")), "application/json")
        self.assertEqual(redis_cli(self.env.redis_db, "HGET", key, "all"), r1[2].decode())
        self.assertEqual(redis_cli(self.env.redis_db, "HGET", key, "a:" + addr), a1[2].decode())
        ttl = int(redis_cli(self.env.redis_db, "TTL", key))
        self.assertTrue(0 < ttl <= self.TTL, "TTL %d, --cache-ttl %d" % (ttl, self.TTL))
        # Server-Timing: a HIT touched no database
        t_miss, t_hit = server_timing(r1[1]), server_timing(r2[1])
        self.assertGreater(t_miss["db"], 0.0, r1[1])
        self.assertEqual(t_hit["db"], 0.0, r2[1])
        self.assertGreater(t_hit["cache"], 0.0, r2[1])

    # -- writes: invalidation

    def test_open_close_visible_in_next_listing(self):
        sid, owner, cat = self.owned_store(category=self.categories[1], status="OPENED")
        addr = scalar(self.url, "SELECT address FROM stores WHERE id = %d" % sid)
        token = make_session(self.url, owner)
        for new_status, verb in (("CLOSED", "closed"), ("OPENED", "opened"), ("OPENED", "opened"),
                                 ("CLOSED", "closed")):
            # fill (and, with the cache, confirm the entries are cached)
            for _ in range(2 if self.CACHE else 1):
                self.env.listing(cat)
                self.env.listing(cat, addr)
            if self.CACHE:
                self.assertEqual(self.x_cache(self.env.listing(cat)), "HIT")
            resp = self.env.req("PATCH", "/stores/%d/%s" % (sid, verb), headers=auth(token))
            self.assertEqual(resp[0], 200, resp)
            doc = body_json(self, resp)
            assert_store_shape(self, doc)
            self.assertEqual(doc["openStatus"], new_status)
            self.assertEqual(scalar(self.url, "SELECT open_status FROM stores WHERE id = %d" % sid), new_status)
            self.assertEqual(doc, db_json(self.url, "SELECT %s FROM stores s WHERE s.id = %d" % (STORE_JSON_SQL, sid)))
            for r, expected in ((self.env.listing(cat), db_listing(self.url, cat)),
                                (self.env.listing(cat, addr), db_listing(self.url, cat, addr))):
                self.assertEqual(r[0], 200)
                self.expect_fresh(r, "first listing after PATCH %s" % verb)
                got = body_json(self, r)
                self.assertEqual([s["openStatus"] for s in got if s["id"] == sid], [new_status],
                                 "listing after PATCH /stores/%d/%s (X-Cache %s)" % (sid, verb, self.x_cache(r)))
                self.assertEqual(got, expected)

    def test_create_visible_in_next_listing(self):
        cat = self.categories[3]
        user = int(scalar(self.url, "SELECT max(id) FROM users"))
        token = make_session(self.url, user)
        for wrapped in (False, True):
            for _ in range(2 if self.CACHE else 1):
                before = self.env.listing(cat)
            if self.CACHE:
                self.assertEqual(self.x_cache(before), "HIT")
            n_before = db_count(self.url)
            store = {"name": "New Store %s %s" % (wrapped, os.urandom(4).hex()), "phone": "02-123-4567",
                     "address": "Test-ro 5, Busan", "introduction": "Fresh noodles", "categoryId": cat}
            body = {"store": store} if wrapped else store
            resp = self.env.req("POST", "/stores", body=body, headers=json_headers(token))
            self.assertEqual(resp[0], 201, resp)
            doc = body_json(self, resp)
            assert_store_shape(self, doc)
            self.assertEqual(db_count(self.url), n_before + 1)
            row = db_json(self.url, "SELECT %s FROM stores s WHERE s.name = %s" % (STORE_JSON_SQL,
                                                                                   sql_literal(store["name"])))
            self.assertEqual(doc, row)
            for k in ("name", "phone", "address", "introduction", "categoryId"):
                self.assertEqual(doc[k], store[k], k)
            self.assertEqual(doc["ownerId"], user)
            self.assertEqual(doc["openStatus"], "CLOSED")
            after = self.env.listing(cat)
            self.expect_fresh(after, "first listing after POST /stores")
            got = body_json(self, after)
            self.assertIn(doc["id"], [s["id"] for s in got], "new store missing from the next listing (X-Cache %s)"
                          % self.x_cache(after))
            self.assertEqual(got, db_listing(self.url, cat))
            detail = self.env.get("/stores/%d" % doc["id"])
            self.assertEqual(detail[0], 200)
            self.assertEqual(body_json(self, detail), dict(doc, menus=[]))

    def test_create_without_introduction(self):
        user = int(scalar(self.url, "SELECT min(id) FROM users"))
        token = make_session(self.url, user)
        name = "No Intro " + os.urandom(4).hex()
        resp = self.env.req("POST", "/stores", body={"name": name, "phone": "1", "address": "A 1",
                                                      "categoryId": self.categories[0]}, headers=json_headers(token))
        self.assertEqual(resp[0], 201, resp)
        doc = body_json(self, resp)
        self.assertEqual(doc, db_json(self.url, "SELECT %s FROM stores s WHERE s.name = %s"
                                      % (STORE_JSON_SQL, sql_literal(name))))

    # -- writes: authorization

    def test_writes_need_a_valid_token(self):
        sid, owner, cat = self.owned_store()
        valid = make_session(self.url, owner)
        revoked = make_session(self.url, owner, revoked=True)
        bad_headers = {
            "no header": {},
            "malformed": {"Authorization": "Token abc"},
            "not hex": {"Authorization": "Token " + "zz" * 32},
            "short": {"Authorization": "Token " + valid[:-2]},
            "long": {"Authorization": "Token " + valid + "00"},
            "unknown": auth(os.urandom(32).hex()),
            "revoked": auth(revoked),
            "other scheme": {"Authorization": "Basic dXNlcjE6cGFzcw=="},
            "empty": {"Authorization": ""},
        }
        row = db_store_row(self.url, sid)
        n = db_count(self.url)
        create = {"name": "Unauthorised", "phone": "1", "address": "A", "categoryId": cat}
        for what, h in bad_headers.items():
            for method, path, body in (("PATCH", "/stores/%d/opened" % sid, None),
                                       ("PATCH", "/stores/%d/closed" % sid, None),
                                       ("POST", "/stores", create)):
                headers = dict(h)
                if body is not None:
                    headers["Content-Type"] = "application/json"
                resp = self.env.req(method, path, body=body, headers=headers)
                assert_error(self, resp, 401, what="%s %s with %s token" % (method, path, what))
        self.assertEqual(db_store_row(self.url, sid), row)
        self.assertEqual(db_count(self.url), n)

    def test_other_owners_store_403(self):
        sid, owner, cat = self.owned_store()
        other = self.other_user(owner)
        token = make_session(self.url, other)
        row = db_store_row(self.url, sid)
        for verb in ("opened", "closed"):
            resp = self.env.req("PATCH", "/stores/%d/%s" % (sid, verb), headers=auth(token))
            assert_error(self, resp, 403, what="PATCH %s by user %d (owner %d)" % (verb, other, owner))
        self.assertEqual(db_store_row(self.url, sid), row, "store %d changed by a 403" % sid)

    def test_unknown_store_patch_404(self):
        token = make_session(self.url, 1)
        for path in ("/stores/%d/opened" % (self.max_store + 1000), "/stores/%d/closed" % (self.max_store + 1000),
                     "/stores/abc/opened", "/stores/0/closed"):
            assert_error(self, self.env.req("PATCH", path, headers=auth(token)), 404, what="PATCH " + path)

    # -- writes: validation

    def test_create_validation_inserts_nothing(self):
        token = make_session(self.url, 2)
        cat = self.categories[0]
        good = {"name": "Valid Name", "phone": "02-000-0000", "address": "Somewhere 1", "introduction": "hi",
                "categoryId": cat}
        n = db_count(self.url)
        for body, fields in invalid_creates(good, self.categories):
            resp = self.env.req("POST", "/stores", body=json.dumps(body), headers=json_headers(token))
            assert_error(self, resp, 422, fields, what="POST /stores %r" % (body,))
        for body, ctype, statuses in malformed_creates(good):
            h = auth(token)
            h["Content-Type"] = ctype
            resp = self.env.req("POST", "/stores", body=body, headers=h)
            self.assertIn(resp[0], statuses, "POST /stores (%s) %r -> %r" % (ctype, body[:60], resp))
            assert_error(self, resp, resp[0], what="POST /stores %r" % body[:60])
        self.assertEqual(db_count(self.url), n, "a rejected POST /stores inserted a row")
        # the boundary: 100 characters is fine
        resp = self.env.req("POST", "/stores", body=dict(good, name="n" * 100), headers=json_headers(token))
        self.assertEqual(resp[0], 201, resp)
        self.assertEqual(db_count(self.url), n + 1)
        self.assertEqual(db_count(self.url, "stores WHERE name = '%s'" % ("n" * 100)), 1)

    # -- operations

    def test_readyz(self):
        resp = self.env.get("/readyz")
        self.assertEqual(resp[0], 200, resp)
        self.assertEqual(body_json(self, resp), {"db": "ok", "redis": "ok" if self.CACHE else "disabled"})

    def test_metrics_series_and_cache_counters(self):
        m0 = scrape(self.env)
        cat = self.categories[4]
        q = "delivery_stores_by_category"
        for _ in range(3):
            self.assertEqual(self.env.listing(cat)[0], 200)
        self.assertEqual(self.env.get("/stores/1")[0], 200)
        m1 = scrape(self.env)
        for name in ("db_query_duration_seconds", "db_pool_wait_seconds"):
            self.assertEqual(m1.types.get(name), "histogram", name)
            check_histograms(self, m1, name)
        self.assertEqual(m1.types.get("db_errors_total"), "counter")
        self.assertEqual(m1.types.get("cache_requests_total"), "counter")
        for r in ("hit", "miss", "error"):
            self.assertIsNotNone(m1.get_value("cache_requests_total", result=r), "cache_requests_total{result=%s}" % r)
        labels = {d["query"] for d, _ in m1.samples("db_query_duration_seconds_count")}
        for stmt in ("delivery_categories", "delivery_stores_by_category", "delivery_stores_by_category_address",
                     "delivery_store", "delivery_store_create", "delivery_store_set_status"):
            self.assertIn(stmt, labels)

        def delta(name, **lb):
            return m1.total(name, **lb) - m0.total(name, **lb)

        if self.CACHE:
            self.assertEqual(delta("cache_requests_total", result="miss"), 1)
            self.assertEqual(delta("cache_requests_total", result="hit"), 2)
            self.assertEqual(delta("db_query_duration_seconds_count", query=q), 1)
        else:
            self.assertEqual(delta("cache_requests_total", result="miss"), 0)
            self.assertEqual(delta("cache_requests_total", result="hit"), 0)
            self.assertEqual(delta("db_query_duration_seconds_count", query=q), 3)
        self.assertEqual(delta("cache_requests_total", result="error"), 0)
        self.assertEqual(delta("db_query_duration_seconds_count", query="delivery_store"), 1)
        self.assertEqual(delta("db_errors_total"), 0)
        self.assertGreaterEqual(delta("db_pool_wait_seconds_count"), 1 if self.CACHE else 4)

    def test_server_timing_everywhere(self):
        token = make_session(self.url, 1)
        responses = {
            "listing": self.env.listing(self.categories[0]),
            "listing again": self.env.listing(self.categories[0]),
            "categories": self.env.get("/stores/categories"),
            "detail": self.env.get("/stores/1"),
            "404": self.env.get("/stores/%d" % (self.max_store + 1)),
            "422": self.env.get("/stores?categoryId=x"),
            "401": self.env.req("PATCH", "/stores/1/opened"),
            "400": self.env.req("POST", "/stores", body=b"{", headers=json_headers(token)),
            "health": self.env.get("/health_check"),
        }
        for what, (status, headers, body) in responses.items():
            t = server_timing(headers)
            self.assertIn("db", t, "%s (%d): Server-Timing %r" % (what, status, headers.get("server-timing")))
            self.assertIn("cache", t, "%s (%d): Server-Timing %r" % (what, status, headers.get("server-timing")))
        self.assertGreater(server_timing(responses["detail"][1])["db"], 0.0)


class AsyncCacheOn(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, REDIS_DB = "async", True, 1


    def test_metrics_exposition_valid(self):
        """The whole /metrics text parses strictly once GET /stores and POST /stores (one route
        template, two methods) have both been served."""
        self.env.listing(1)
        self.env.req("POST", "/stores", body=b"{", headers=json_headers(os.urandom(32).hex()))
        self.env.req("POST", "/stores", body=b"{", headers=json_headers())
        m = self.env.srv.metrics()  # strict parser: duplicates, grouping, TYPE lines
        check_histograms(self, m, "http_request_duration_seconds")


class AsyncCacheOff(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, REDIS_DB = "async", False, 2


class SyncCacheOn(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, REDIS_DB = "sync", True, 3


class SyncCacheOff(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, REDIS_DB = "sync", False, 4


# --cache-local: the same scenarios, answered from each worker's copy once Redis has been read.
# Redis dbs 1-14 are taken by the other classes and files; 15 and 0 were the last free ones of the
# harness's 16 (test_cache_local.py, which never runs beside this file, uses them as well).


class AsyncCacheLocal(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, LOCAL, REDIS_DB = "async", True, True, 15


class SyncCacheLocal(DeliveryScenarios, unittest.TestCase):
    MODE, CACHE, LOCAL, REDIS_DB = "sync", True, True, 0


# ----------------------------------------------------------------------------------------------
# TTL expiry


class TtlExpiry:
    MODE = "async"
    REDIS_DB = 5

    def test_entry_expires_after_cache_ttl(self):
        env = Env(self.REDIS_DB, mode=self.MODE, cache=True, ttl=1)
        self.addCleanup(env.finish)
        env.start()
        cat = 1
        key = CACHE_KEY % cat
        r1 = env.listing(cat)
        r2 = env.listing(cat)
        self.assertEqual([r1[1].get("x-cache"), r2[1].get("x-cache")], ["MISS", "HIT"])
        self.assertEqual(r1[2], r2[2])
        ttl = int(redis_cli(self.REDIS_DB, "TTL", key))
        self.assertIn(ttl, (0, 1), "TTL %d with --cache-ttl 1" % ttl)
        # an address field added later does not extend the category's clock
        env.listing(cat, "Seoul Gangnam-gu")
        time.sleep(2.5)
        self.assertEqual(redis_cli(self.REDIS_DB, "EXISTS", key), "0", "%s still in Redis after its TTL" % key)
        r3 = env.listing(cat)
        self.assertEqual(r3[0], 200)
        self.assertEqual(r3[1].get("x-cache"), "MISS")
        self.assertEqual(json.loads(r3[2]), db_listing(env.url, cat))
        self.assertEqual(env.listing(cat, "Seoul Gangnam-gu")[1].get("x-cache"), "MISS")
        self.assertEqual(env.listing(cat)[1].get("x-cache"), "HIT")


class TtlExpiryAsync(TtlExpiry, unittest.TestCase):
    MODE, REDIS_DB = "async", 5


class TtlExpirySync(TtlExpiry, unittest.TestCase):
    MODE, REDIS_DB = "sync", 6


# ----------------------------------------------------------------------------------------------
# Innocent neighbours: an FK violation aborts its pipeline batch, the others must still succeed


class InnocentNeighbours:
    MODE = "async"
    REDIS_DB = 7
    ROUNDS = 3
    PER_ROUND = 40

    def test_concurrent_creates_with_fk_violations(self):
        env = Env(self.REDIS_DB, mode=self.MODE, cache=False, workers=1, extra=["--db-conns", "1"])
        self.addCleanup(env.finish)
        env.start()
        cats = [c["id"] for c in db_categories(env.url)]
        users = [int(u) for u in psql(env.url, "SELECT id FROM users ORDER BY id").split()]
        tokens = {u: make_session(env.url, u) for u in users}
        bad_cat = 990000 + len(cats)
        n0 = db_count(env.url)
        valid_total = 0
        problems = []
        summary = {}
        for rnd in range(self.ROUNDS + 1):
            jobs = neighbour_jobs(rnd, self.PER_ROUND, users, cats, bad_cat)
            results = post_at_once(env, jobs, tokens)
            for job, res in zip(jobs, results):
                if isinstance(res, Exception) or res is None:
                    problems.append("%s: %r" % (job["name"], res))
                    continue
                k = "round %d %s -> %d" % (rnd, "valid" if job["valid"] else "bad-fk", res[0])
                summary[k] = summary.get(k, 0) + 1
                valid_total += 1 if job["valid"] else 0
                problems += neighbour_answer_problems(job, res)
            problems += neighbour_row_problems(env, rnd, jobs)
        if problems:
            self.fail("statuses: %s\nfirst problems:\n%s" % (
            ", ".join("%s: %d" % kv for kv in sorted(summary.items())), "\n".join(problems[:12])))
        self.assertEqual(db_count(env.url), n0 + valid_total)
        m = env.srv.metrics()
        self.assertGreaterEqual(m.total("db_errors_total"), self.ROUNDS * self.PER_ROUND // 2)


def neighbour_jobs(rnd, per_round, users, cats, bad_cat):
    """One round's POST /stores: in round 0 all valid (the control), then every other one names a
    category that does not exist (an FK violation)."""
    jobs = []
    for i in range(per_round):
        valid = rnd == 0 or (i + rnd) % 2 == 0
        user = users[i % len(users)]
        name = "Neighbour r%d i%d %s" % (rnd, i, os.urandom(3).hex())
        jobs.append({"valid": valid, "user": user, "name": name,
                     "body": {"name": name, "phone": "010-%04d" % i, "address": "Pipeline-ro %d" % i,
                              "categoryId": cats[i % len(cats)] if valid else bad_cat}})
    return jobs


def post_at_once(env, jobs, tokens):
    """Each job's POST, from a thread of its own, all released by one barrier: the responses (or
    the exception, or None when its thread did not finish in 30 s), in the jobs' order."""
    barrier = threading.Barrier(len(jobs))
    results = [None] * len(jobs)

    def run(k):
        job = jobs[k]
        try:
            barrier.wait(timeout=10)
            results[k] = env.req("POST", "/stores", body=job["body"],
                                 headers=json_headers(tokens[job["user"]]), timeout=10)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            results[k] = e

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def neighbour_answer_problems(job, res):
    """What is wrong with one answer: a valid store is 201 with its name and owner, an FK-violating
    one 422 naming categoryId."""
    status, _, body = res
    if job["valid"]:
        if status != 201:
            return ["valid %s -> %d %s" % (job["name"], status, body[:200])]
        doc = json.loads(body)
        if doc.get("name") != job["name"] or doc.get("ownerId") != job["user"]:
            return ["valid %s -> 201 with %r" % (job["name"], doc)]
        return []
    if status != 422:
        return ["FK-violating %s -> %d %s" % (job["name"], status, body[:200])]
    errs = json.loads(body).get("errors", {})
    if "categoryId" not in errs:
        return ["FK-violating %s -> 422 without categoryId: %s" % (job["name"], body[:200])]
    return []


def neighbour_row_problems(env, rnd, jobs):
    """Each valid store of the round is in the database once, each invalid one not at all."""
    problems = []
    counts = dict(tuple(line.rsplit("|", 1)) for line in psql(
        env.url, "SELECT name, count(*) FROM stores WHERE name LIKE 'Neighbour r%d %%' GROUP BY name"
        % rnd).splitlines())
    for job in jobs:
        c = int(counts.get(job["name"], 0))
        if c != (1 if job["valid"] else 0):
            problems.append("%s %s is in the database %d times" % ("valid" if job["valid"] else "invalid",
                                                                  job["name"], c))
    return problems

class InnocentNeighboursAsync(InnocentNeighbours, unittest.TestCase):
    MODE, REDIS_DB = "async", 7


class InnocentNeighboursSync(InnocentNeighbours, unittest.TestCase):
    MODE, REDIS_DB = "sync", 8
    ROUNDS = 1


# ----------------------------------------------------------------------------------------------
# Two workers: a write on one worker is visible in the next read, whichever worker serves it


class TwoWorkersInvalidation(unittest.TestCase):
    REDIS_DB = 9
    ROUNDS = 100
    READERS = 4  # keep-alive connections, spread over both workers by SO_REUSEPORT

    LOCAL = False

    def test_write_visible_in_next_read_across_workers(self):
        env = Env(self.REDIS_DB, mode="async", cache=True, workers=2, local=self.LOCAL)
        self.addCleanup(env.finish)
        env.start()
        sid, owner, cat = (int(x) for x in scalar(env.url, "SELECT id || '|' || owner_id || '|' || category_id"
                                                           " FROM stores ORDER BY id LIMIT 1").split("|"))
        token = make_session(env.url, owner)
        get = build_request("GET", "/stores?categoryId=%d" % cat)
        writer = env.srv.raw_conn()
        readers = [env.srv.raw_conn() for _ in range(self.READERS)]
        self.addCleanup(lambda: [c.close() for c in readers + [writer]])
        stale = []
        for i in range(self.ROUNDS):
            verb, status = ("closed", "CLOSED") if i % 2 == 0 else ("opened", "OPENED")
            for _ in range(2):  # cached, whichever worker filled it
                for c in readers:
                    c.send(get)
                    self.assertEqual(c.read_response().status, 200)
            writer.send(build_request("PATCH", "/stores/%d/%s" % (sid, verb), headers=auth(token)))
            resp = writer.read_response()
            self.assertEqual(resp.status, 200, resp)
            for c in readers:  # the very next reads, as soon as the write is acknowledged
                c.send(get)
            for k, c in enumerate(readers):
                r = c.read_response()
                got = [s["openStatus"] for s in json.loads(r.body) if s["id"] == sid]
                if got != [status]:
                    stale.append("round %d: PATCH /stores/%d/%s -> 200, then GET /stores?categoryId=%d on"
                                 " connection %d -> X-Cache %s, openStatus %r"
                                 % (i, sid, verb, cat, k, r.headers.get("x-cache"), got))
        if stale:
            self.fail("%d stale reads:\n%s" % (len(stale), "\n".join(stale[:10])))


class TwoWorkersInvalidationLocal(TwoWorkersInvalidation):
    """The same with --cache-local: the readers' second rounds come from the workers' copies,
    which the write must clear on both workers before it answers."""
    REDIS_DB = 15
    LOCAL = True


if __name__ == "__main__":
    unittest.main()
