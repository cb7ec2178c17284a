"""Shared helpers for the board (RealWorld "Conduit") conformance suite: standard library only.

Each test class gets a database of its own on the harness's PostgreSQL, migrated (and seeded with
the `tiny` fixtures when SEED is set), and one `sutlab serve` on a free port:

    class Users(BoardCase):
        MODE = "sync"                 # --db-mode
        COUNT_PAGINATION = True       # --count-pagination (or "estimate": --count-pagination estimate)

        def test_x(self):
            user, token, password = self.register()
            r = self.call("GET", "/api/user", token=token, expect=200)
            check_schema(self, r.json["user"], USER, "user")

Every response goes through the same checks (`BoardCase.call`): never a 5xx, every error a JSON
`{"errors":{"field":["message"]}}` document free of SQL and file paths, every 2xx with a body JSON.

Expected values come from the contracts (RealWorld's OpenAPI file, v2.0.0, which docs/board-api.md
names; the README's endpoint table and errors; docs/board-api.md) and from what PostgreSQL holds
(psql), never from an earlier server answer.
"""

import hashlib
import http.client
import itertools
import json
import re
import subprocess
import threading
import unittest
import urllib.parse
import uuid

from pgtest import FreshDatabase, psql, rows, scalar
from sutlab_testlib import (
    Server, clean_env, media_type, release_class, start_class_server, stop_class_server, sutlab_bin,
)

MiB = 1 << 20
BCRYPT_COST = 4
FIXTURE_PASSWORD = "password"  # README.md: every fixture user logs in as user<N>@example.com / password

TOKEN_RE = re.compile(r"^[0-9a-f]{64}$")
# docs/board-api.md: UTC ISO 8601 with milliseconds, 2026-11-29T22:05:15.123Z
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

# Strings an error body must never carry (SQL, PostgreSQL messages, file paths).
LEAKS = ("SELECT", "ERROR:", "/work/", "postgres", "INSERT", "UPDATE ", "DELETE FROM", "libpq", ".c:")

BOARD_TABLES = ("users", "sessions", "follows", "articles", "tags", "article_tags", "favorites", "comments")


# ----------------------------------------------------------------------------------------------
# Schemas: components/schemas of RealWorld's OpenAPI file (v2.0.0), tightened where docs/board-api.md
# fixes what the spec leaves open. A schema is {key: type}; every key is required (as in the spec's
# `required` lists for these objects). Types: "string", "nullable-string", "boolean", "integer",
# "datetime" (a string in the docs' format), ["string"] (array of strings), or a nested schema.

PROFILE = {  # components/schemas/Profile
    "username": "string",
    "bio": "nullable-string",
    "image": "nullable-string",
    "following": "boolean",
}

USER = {  # components/schemas/User (bio and image: string or null, null until set)
    "email": "string",
    "token": "string",
    "username": "string",
    "bio": "nullable-string",
    "image": "nullable-string",
}

ARTICLE = {  # components/schemas/Article
    "slug": "string",
    "title": "string",
    "description": "string",
    "body": "string",
    "tagList": ["string"],
    "createdAt": "datetime",
    "updatedAt": "datetime",
    "favorited": "boolean",
    "favoritesCount": "integer",
    "author": PROFILE,
}

# responses/MultipleArticlesResponse: the same without body (docs: "list items are the same
# without body")
ARTICLE_ITEM = {k: v for k, v in ARTICLE.items() if k != "body"}
ARTICLE_ITEM_FORBIDDEN = ("body",)

COMMENT = {  # components/schemas/Comment
    "id": "integer",
    "createdAt": "datetime",
    "updatedAt": "datetime",
    "body": "string",
    "author": PROFILE,
}


def check_schema(tc, value, schema, where="$"):
    """Asserts value matches schema (see above); `where` names the place in failure messages."""
    if isinstance(schema, dict):
        tc.assertIsInstance(value, dict, "%s: expected an object, got %r" % (where, value))
        for key, sub in schema.items():
            tc.assertIn(key, value, "%s: required key %r missing in %r" % (where, key, value))
            check_schema(tc, value[key], sub, "%s.%s" % (where, key))
        return
    if isinstance(schema, list):
        tc.assertIsInstance(value, list, "%s: expected an array, got %r" % (where, value))
        for i, item in enumerate(value):
            check_schema(tc, item, schema[0], "%s[%d]" % (where, i))
        return
    if schema == "string":
        tc.assertIsInstance(value, str, "%s: expected a string, got %r" % (where, value))
    elif schema == "nullable-string":
        tc.assertTrue(value is None or isinstance(value, str),
                      "%s: expected a string or null, got %r" % (where, value))
    elif schema == "boolean":
        tc.assertIsInstance(value, bool, "%s: expected a boolean, got %r" % (where, value))
    elif schema == "integer":
        tc.assertTrue(isinstance(value, int) and not isinstance(value, bool),
                      "%s: expected an integer, got %r" % (where, value))
    elif schema == "datetime":
        tc.assertIsInstance(value, str, "%s: expected a date-time string, got %r" % (where, value))
        tc.assertRegex(value, DATETIME_RE, "%s: not UTC ISO 8601 with milliseconds" % where)
    else:
        raise ValueError("unknown schema type %r" % (schema,))


def check_article(tc, value, where="article"):
    check_schema(tc, value, ARTICLE, where)


def check_article_list(tc, doc, where="$"):
    """responses/MultipleArticlesResponse: {"articles":[item...], "articlesCount":int}."""
    tc.assertIsInstance(doc, dict, "%s: %r" % (where, doc))
    tc.assertIn("articles", doc, where)
    tc.assertIn("articlesCount", doc, where)
    check_schema(tc, doc["articlesCount"], "integer", where + ".articlesCount")
    tc.assertIsInstance(doc["articles"], list, where)
    for i, item in enumerate(doc["articles"]):
        check_schema(tc, item, ARTICLE_ITEM, "%s.articles[%d]" % (where, i))
        for k in ARTICLE_ITEM_FORBIDDEN:
            tc.assertNotIn(k, item, "%s.articles[%d]: list items carry no %r" % (where, i, k))


def check_error_doc(tc, resp):
    """components/schemas/GenericErrorModel: {"errors":{field:[message...]}}, JSON, no leaks."""
    tc.assertEqual(media_type(resp.headers.get("content-type")), "application/json",
                   "error body must be JSON: %s" % resp)
    doc = resp.json
    tc.assertIsInstance(doc, dict, str(resp))
    tc.assertIn("errors", doc, str(resp))
    errors = doc["errors"]
    tc.assertIsInstance(errors, dict, str(resp))
    tc.assertTrue(errors, "empty errors object: %s" % resp)
    for field, messages in errors.items():
        tc.assertIsInstance(messages, list, str(resp))
        tc.assertTrue(messages, "no message for %r: %s" % (field, resp))
        for m in messages:
            tc.assertIsInstance(m, str, str(resp))
    text = resp.body.decode("utf-8", "replace")
    for leak in LEAKS:
        tc.assertNotIn(leak, text, "error body carries %r: %s" % (leak, resp))
    return errors


def slug_base(title):
    """docs/board-api.md: lower-cased, runs of anything but a-z0-9 turned into '-', trimmed."""
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s or "article"


def token_hash_hex(token):
    """What the sessions table holds for a token: SHA-256 of the 32 raw bytes."""
    return hashlib.sha256(bytes.fromhex(token)).hexdigest()


def q(s):
    """A path segment, percent-encoded (nothing is safe)."""
    return urllib.parse.quote(s, safe="")


def sql_lit(s):
    """A SQL string literal for test-side psql queries (the tests' own SQL, not the server's)."""
    return "'" + s.replace("'", "''") + "'"


def sutlab_db(*args, timeout=180):
    proc = subprocess.run([sutlab_bin(), "db"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=clean_env())
    if proc.returncode != 0:
        raise AssertionError("sutlab db %s: exit %d\nstdout: %s\nstderr: %s"
                             % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
    return proc.stdout


# ----------------------------------------------------------------------------------------------
# HTTP


class Resp:
    def __init__(self, method, path, status, headers, body, sent=None):
        self.method = method
        self.path = path
        self.status = status
        self.headers = headers
        self.body = body
        self.sent = sent
        self._json = None

    @property
    def json(self):
        if self._json is None:
            try:
                self._json = json.loads(self.body.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                raise AssertionError("response body is not JSON (%s): %s" % (e, self))
        return self._json

    def __str__(self):
        sent = ""
        if self.sent is not None:
            sent = " body=%r" % (self.sent[:300] + (b"..." if len(self.sent) > 300 else b""))
        return "%s %s%s -> %d %r" % (self.method, self.path[:300], sent, self.status, self.body[:600])

    __repr__ = __str__


_uniq = itertools.count(1)


def unique(prefix):
    return "%s%d%s" % (prefix, next(_uniq), uuid.uuid4().hex[:6])


class BoardCase(unittest.TestCase):
    """One database + one server per class; see the module docstring."""

    MODE = "async"
    COUNT_PAGINATION = False
    SEED = False
    WORKERS = 1
    EXTRA_ARGS = ()

    @classmethod
    def server_args(cls):
        args = ["--db-url", cls.db_url, "--bcrypt-cost", str(BCRYPT_COST), "--db-mode", cls.MODE]
        if cls.COUNT_PAGINATION is True:
            args.append("--count-pagination")
        elif cls.COUNT_PAGINATION:
            args += ["--count-pagination", cls.COUNT_PAGINATION]
        return args + list(cls.EXTRA_ARGS)

    @classmethod
    def setUpClass(cls):
        cls.db = FreshDatabase(prefix="sutlab_board")
        cls.db_url = cls.db.create()
        cls.server = None
        try:
            sutlab_db("migrate", "--db-url", cls.db_url)
            if cls.SEED:
                sutlab_db("seed", "--size", "tiny", "--bcrypt-cost", str(BCRYPT_COST), "--db-url", cls.db_url)
        except BaseException:
            release_class(db=cls.db)
            raise
        cls.server = start_class_server(Server(extra_args=cls.server_args(), workers=cls.WORKERS), db=cls.db)
        try:
            cls.prepare()
        except BaseException:
            release_class(cls.server, db=cls.db)
            raise

    @classmethod
    def prepare(cls):
        """Class-level data set-up, after the server started (override)."""

    @classmethod
    def tearDownClass(cls):
        stop_class_server(cls.server, db=cls.db)

    # -- SQL

    @classmethod
    def sql(cls, query):
        return psql(cls.db_url, query)

    @classmethod
    def scalar(cls, query):
        return scalar(cls.db_url, query)

    @classmethod
    def rows(cls, query):
        return rows(cls.db_url, query)

    @classmethod
    def count(cls, table, where=None):
        return int(scalar(cls.db_url, "SELECT count(*) FROM %s%s" % (table, " WHERE " + where if where else "")))

    @classmethod
    def table_counts(cls):
        return {t: cls.count(t) for t in BOARD_TABLES}

    # -- HTTP

    @classmethod
    def raw_call(cls, method, path, body=None, token=None, raw=None, headers=None, timeout=30):
        """One request on a fresh connection; no assertions. body: an object sent as JSON;
        raw: bytes sent as is (Content-Type application/json unless headers say otherwise)."""
        hdrs = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
        if raw is not None:
            data = raw
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        if token is not None:
            hdrs["Authorization"] = "Token " + token
        hdrs.update(headers or {})
        conn = http.client.HTTPConnection("127.0.0.1", cls.server.port, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            rbody = r.read()
            rheaders = {k.lower(): v for k, v in r.getheaders()}
            return Resp(method, path, r.status, rheaders, rbody, sent=data)
        finally:
            conn.close()

    def call(self, method, path, body=None, token=None, raw=None, headers=None, expect=None, timeout=30):
        """raw_call plus the checks every board response must pass; `expect`: status or set."""
        r = self.raw_call(method, path, body=body, token=token, raw=raw, headers=headers, timeout=timeout)
        self.check_response(r)
        if expect is not None:
            allowed = {expect} if isinstance(expect, int) else set(expect)
            self.assertIn(r.status, allowed, "expected %s: %s" % (sorted(allowed), r))
        return r

    def check_response(self, r):
        self.assertLess(r.status, 500, "never a 5xx for anything a client sends: %s" % r)
        if r.status >= 400:
            check_error_doc(self, r)
        elif r.status == 204:
            self.assertEqual(r.body, b"", "204 with a body: %s" % r)
        elif r.method != "HEAD" and r.status in (200, 201):
            self.assertEqual(media_type(r.headers.get("content-type")), "application/json", str(r))
            r.json  # parses

    def errors(self, r, status, field=None, message=None):
        """Asserts r is `status` with an error for `field` (and a message matching regex `message`)."""
        self.assertEqual(r.status, status, str(r))
        errors = check_error_doc(self, r)
        if field is not None:
            self.assertIn(field, errors, "expected an error for %r: %s" % (field, r))
            if message is not None:
                self.assertTrue(any(re.search(message, m) for m in errors[field]),
                                "no %r message matching %r: %s" % (field, message, r))
        return errors

    # -- API shortcuts

    def register(self, username=None, email=None, password=None, prefix="u"):
        """Registers through the API; returns (user dict, token, password)."""
        username = username or unique(prefix)
        email = email or "%s@example.org" % username.lower()
        password = password or "pw-" + uuid.uuid4().hex[:10]
        r = self.call("POST", "/api/users", {"user": {"username": username, "email": email,
                                                      "password": password}}, expect=201)
        user = r.json["user"]
        return user, user["token"], password

    def login(self, email, password, expect=200):
        return self.call("POST", "/api/users/login", {"user": {"email": email, "password": password}},
                         expect=expect)

    def create_article(self, token, title=None, description="desc", body="body", tagList=None):
        art = {"title": title or unique("Title "), "description": description, "body": body}
        if tagList is not None:
            art["tagList"] = tagList
        r = self.call("POST", "/api/articles", {"article": art}, token=token, expect=201)
        return r.json["article"]

    def article_id(self, slug):
        v = self.scalar("SELECT id FROM articles WHERE slug = %s" % sql_lit(slug))
        self.assertTrue(v, "no articles row with slug %r" % slug)
        return int(v)

    def user_id(self, username):
        v = self.scalar("SELECT id FROM users WHERE username = %s" % sql_lit(username))
        self.assertTrue(v, "no users row with username %r" % username)
        return int(v)

    def get_article(self, slug, token=None, expect=200):
        return self.call("GET", "/api/articles/" + q(slug), token=token, expect=expect)

    def list_articles(self, token=None, expect=200, **params):
        qs = urllib.parse.urlencode(params)
        r = self.call("GET", "/api/articles" + ("?" + qs if qs else ""), token=token, expect=expect)
        if r.status == 200:
            check_article_list(self, r.json, r.path)
        return r

    def feed(self, token, expect=200, **params):
        qs = urllib.parse.urlencode(params)
        r = self.call("GET", "/api/articles/feed" + ("?" + qs if qs else ""), token=token, expect=expect)
        if r.status == 200:
            check_article_list(self, r.json, r.path)
        return r


def run_threads(n, target):
    """Runs target(i) for i in range(n) on n threads started together; re-raises the first error."""
    barrier = threading.Barrier(n)
    errors = []

    def wrap(i):
        try:
            barrier.wait(30)
            target(i)
        except BaseException as e:  # noqa: B902 - reported below
            errors.append((i, e))

    threads = [threading.Thread(target=wrap, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if any(t.is_alive() for t in threads):
        raise AssertionError("threads still running after 120 s")
    if errors:
        i, e = errors[0]
        raise AssertionError("%d of %d threads failed; thread %d: %r" % (len(errors), n, i, e))
