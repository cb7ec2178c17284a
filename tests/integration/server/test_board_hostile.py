#!/usr/bin/python3
"""Board conformance: malformed and hostile input.

Wrong types, huge strings and bodies, invalid UTF-8, deep nesting, duplicate keys, NUL, SQL
metacharacters in every parameter, odd path parameters. Every response must be < 500 with a JSON
error body free of SQL and paths (checked by BoardCase.call on every request), the data must be
unchanged (row counts before/after), and the server must keep answering.

Contracts: docs/board-api.md "Errors common to the board" (400 malformed JSON, invalid UTF-8,
duplicate keys, nesting deeper than 2,048; 413 over 1 MiB; 415 not JSON; 422 validation), and
docs/reliability.md ("Hostile input: always a documented 4xx, never a 5xx").
"""

import threading
import unittest

from boardlib import MiB, BoardCase, Resp, q, sql_lit, unique
from sutlab_testlib import build_request

INJECTIONS = ("' OR 1=1 --", '"; DROP TABLE users; --', "'; DELETE FROM articles; --", "1) OR (1=1",
              "%", "_", "\\", "' UNION SELECT password_hash FROM users --", "$1", "::text")


class Hostile(BoardCase):
    MODE = "async"

    @classmethod
    def prepare(cls):
        tc = cls()
        cls.user, cls.token, cls.password = tc.register(prefix="victim")
        cls.other, cls.other_token, _ = tc.register(prefix="other")
        cls.article = tc.create_article(cls.token, title="Target Article", tagList=["target"])
        cls.comment = tc.call("POST", "/api/articles/%s/comments" % q(cls.article["slug"]),
                              {"comment": {"body": "target comment"}}, token=cls.token, expect=201).json["comment"]
        tc.call("POST", "/api/articles/%s/favorite" % q(cls.article["slug"]), token=cls.other_token, expect=200)
        tc.call("POST", "/api/profiles/%s/follow" % q(cls.user["username"]), token=cls.other_token, expect=200)

    def setUp(self):
        self.before = self.table_counts()
        self.users_before = self.sql("SELECT id, username, email, password_hash, bio, image FROM users ORDER BY id")
        self.articles_before = self.sql("SELECT id, slug, title, description, body, favorites_count, updated_at"
                                        " FROM articles ORDER BY id")

    def tearDown(self):
        # whatever happened, the server is alive and answers
        self.assertTrue(self.server.running(), "server exited: %s" % self.server.stderr()[-2000:])
        r = self.raw_call("GET", "/health_check")
        self.assertEqual(r.status, 200, str(r))

    def assert_unchanged(self):
        self.assertEqual(self.table_counts(), self.before)
        self.assertEqual(self.sql("SELECT id, username, email, password_hash, bio, image FROM users ORDER BY id"),
                         self.users_before)
        self.assertEqual(self.sql("SELECT id, slug, title, description, body, favorites_count, updated_at"
                                  " FROM articles ORDER BY id"), self.articles_before)

    @property
    def slug_path(self):
        return "/api/articles/" + q(self.article["slug"])

    def writes(self):
        """(method, path, token) of every endpoint that takes a JSON body."""
        return (("POST", "/api/users", None), ("POST", "/api/users/login", None), ("PUT", "/api/user", self.token),
                ("POST", "/api/articles", self.token), ("PUT", self.slug_path, self.token),
                ("POST", self.slug_path + "/comments", self.token))

    # -- wrong types

    def test_wrong_types_everywhere(self):
        """A valid document with one field of the wrong type: 422 naming that field, nothing written."""
        def valid(path):
            return {
                "/api/users": lambda: {"user": {"username": unique("wt"), "email": unique("wt") + "@x.org",
                                                "password": "pass-word"}},
                "/api/users/login": lambda: {"user": {"email": self.user["email"], "password": self.password}},
                "/api/user": lambda: {"user": {}},
                "/api/articles": lambda: {"article": {"title": "t", "description": "d", "body": "b",
                                                      "tagList": ["a"]}},
                self.slug_path: lambda: {"article": {}},
                self.slug_path + "/comments": lambda: {"comment": {"body": "c"}},
            }[path]()

        fields = {"/api/users": ("username", "email", "password"), "/api/users/login": ("email", "password"),
                  "/api/user": ("username", "email", "password", "bio", "image"),
                  "/api/articles": ("title", "description", "body", "tagList"),
                  self.slug_path: ("title", "description", "body", "tagList"),
                  self.slug_path + "/comments": ("body",)}
        string_bad = (12345, 1.5, True, False, {"a": "b"}, ["x"], [])
        taglist_bad = ("x", 5, {"a": 1}, [1], [["x"]], [None], [True], [{"a": 1}])
        for method, path, token in self.writes():
            doc = valid(path)
            wrapper = list(doc)[0]
            for key in fields[path]:
                for bad in (taglist_bad if key == "tagList" else string_bad):
                    doc = valid(path)
                    doc[wrapper][key] = bad
                    self.errors(self.call(method, path, doc, token=token), 422, key)
            for inner in ([], "x", 1, 1.5, True, [{"a": 1}]):
                self.errors(self.call(method, path, {wrapper: inner}, token=token), 422)
            for raw in (b"[]", b"123", b'"str"', b"null", b"true", b"[{}]"):
                r = self.call(method, path, raw=raw, token=token)
                self.assertIn(r.status, (400, 422), str(r))
        self.assert_unchanged()

    # -- sizes

    def test_huge_strings_422(self):
        big = "x" * (600 * 1024)  # under the 1 MiB body limit, over every field limit
        for method, path, token, doc in (
                ("POST", "/api/users", None, {"user": {"username": big, "email": unique("h") + "@x.org",
                                                       "password": "pass-word"}}),
                ("POST", "/api/users", None, {"user": {"username": unique("h"), "email": big + "@x.org",
                                                       "password": "pass-word"}}),
                ("POST", "/api/users", None, {"user": {"username": unique("h"), "email": unique("h") + "@x.org",
                                                       "password": big}}),
                ("POST", "/api/users/login", None, {"user": {"email": big[:400000], "password": big[:400000]}}),
                ("PUT", "/api/user", self.token, {"user": {"username": big}}),
                ("POST", "/api/articles", self.token, {"article": {"title": big, "description": "d", "body": "b"}}),
                ("POST", "/api/articles", self.token, {"article": {"title": "t", "description": big, "body": "b"}}),
                ("POST", "/api/articles", self.token, {"article": {"title": "t", "description": "d", "body": "b" * 100001}}),
                ("POST", "/api/articles", self.token, {"article": {"title": "t", "description": "d", "body": "b",
                                                                   "tagList": [big]}}),
                ("POST", "/api/articles", self.token, {"article": {"title": "t", "description": "d", "body": "b",
                                                                   "tagList": ["t%d" % i for i in range(5000)]}}),
                ("PUT", self.slug_path, self.token, {"article": {"body": big}}),
                ("POST", self.slug_path + "/comments", self.token, {"comment": {"body": big}})):
            r = self.call(method, path, doc, token=token)
            if path == "/api/users/login":
                self.assertIn(r.status, (401, 422), str(r))
            else:
                self.errors(r, 422)
        self.assert_unchanged()

    def post_oversized(self, path, size, token=None):
        """POST a JSON body of `size` bytes (Content-Length) on a raw connection; returns a Resp."""
        headers = [("Content-Type", "application/json"), ("Content-Length", str(size))]
        if token:
            headers.append(("Authorization", "Token " + token))
        head = build_request("POST", path, headers=headers)
        prefix = b'{"article":{"title":"t","description":"d","body":"'
        body = prefix + b"x" * (size - len(prefix) - 3) + b'"}}'
        assert len(body) == size
        conn = self.server.raw_conn(timeout=15)
        stop = threading.Event()

        def sender():
            try:
                conn.send(head)
                for i in range(0, len(body), 65536):
                    if stop.is_set():
                        return
                    conn.send(body[i:i + 65536])
            except OSError:
                pass  # the server may answer 413 and close before the whole body is sent

        t = threading.Thread(target=sender, daemon=True)
        t.start()
        try:
            with conn:
                rr = conn.read_response()
        finally:
            stop.set()
            t.join(10)
        return Resp("POST", path, rr.status, rr.headers, rr.body, sent=body[:100])

    def test_body_over_1_mib_413(self):
        for path, token in (("/api/articles", self.token), ("/api/users", None),
                            (self.slug_path + "/comments", self.token), ("/api/users/login", None)):
            r = self.post_oversized(path, 2 * MiB, token)
            self.check_response(r)
            self.errors(r, 413)
        self.assert_unchanged()

    # -- malformed JSON

    def test_malformed_json_400(self):
        for method, path, token in self.writes():
            for raw in (b"{", b'{"user":}', b'{"user":{"a":1},}', b"{} trailing", b"{'a': 1}", b'{"a":"\\x41"}',
                        b'{"a":NaN}', b'{"a":01}', b'{"a":"tab\there"}', b'{"a":"nl\nhere"}',
                        b'{"a":"nul\x00here"}', b'{"a" 1}', b"[1,2"):
                r = self.call(method, path, raw=raw, token=token)
                self.errors(r, 400)
        self.assert_unchanged()

    def test_empty_body(self):
        for method, path, token in self.writes():
            r = self.call(method, path, raw=b"", token=token)
            self.assertIn(r.status, (400, 422), str(r))
        self.assert_unchanged()

    def test_invalid_utf8_400(self):
        good = {"/api/users": b'{"user":{"username":"%s","email":"e%s@x.org","password":"pass-word"}}',
                "/api/articles": b'{"article":{"title":"%s","description":"d%s","body":"b"}}'}
        for bad in (b"\xff\xfe", b"\xc0\xaf", b"\xe2\x82", b"\xed\xa0\x80", b"\xe9t\xe9", b"\xf8\x88\x80\x80\x80",
                    b"ok\x80"):
            for path, tmpl in good.items():
                raw = tmpl % (bad, unique("u").encode())
                r = self.call("POST", path, raw=raw, token=self.token if path == "/api/articles" else None)
                self.errors(r, 400)
            r = self.call("POST", self.slug_path + "/comments", raw=b'{"comment":{"body":"' + bad + b'"}}',
                          token=self.token)
            self.errors(r, 400)
            r = self.call("POST", "/api/users", raw=b'{"user":{"user' + bad + b'name":"a","email":"a@b.c","password":"pass-word"}}')
            self.errors(r, 400)
        # escaped lone surrogates are not text either
        for esc in (b"\\ud800", b"\\udfff", b"a\\ud800b"):
            r = self.call("POST", "/api/articles", raw=b'{"article":{"title":"' + esc + b'","description":"d","body":"b"}}',
                          token=self.token)
            self.assertIn(r.status, (400, 422), str(r))
        self.assert_unchanged()

    def test_valid_utf8_is_kept(self):
        title = "Caf\u00e9 \u2603 \U0001f600 \u4e2d\u6587"
        a = self.create_article(self.token, title=title, body="\U0001f600" * 10)
        self.assertEqual(a["title"], title)
        self.assertEqual(self.scalar("SELECT title FROM articles WHERE slug = %s" % sql_lit(a["slug"])), title)
        self.assertEqual(self.get_article(a["slug"]).json["article"]["body"], "\U0001f600" * 10)
        self.call("DELETE", "/api/articles/" + q(a["slug"]), token=self.token, expect=204)
        self.assertEqual(self.count("articles"), self.before["articles"])

    def test_deep_nesting_400_and_server_survives(self):
        for depth in (10000, 3000):
            for raw in (b"[" * depth + b"]" * depth,
                        b'{"user":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}",
                        b'{"article":{"title":"t","description":"d","body":"b","tagList":' + b"[" * depth
                        + b"]" * depth + b"}}",
                        b"[" * depth):  # unterminated too
                for method, path, token in (("POST", "/api/users", None), ("POST", "/api/articles", self.token)):
                    r = self.call(method, path, raw=raw, token=token)
                    self.errors(r, 400)
                    self.assertEqual(self.raw_call("GET", "/health_check").status, 200)
        self.assert_unchanged()

    def test_duplicate_keys_400(self):
        u = unique("dup")
        for path, raw, token in (
                ("/api/users", ('{"user":{"username":"%s","username":"%s2","email":"%s@x.org","password":"pass-word"}}'
                                % (u, u, u)).encode(), None),
                ("/api/users", ('{"user":{"username":"%s","email":"%s@x.org","password":"pass-word"},"user":{}}'
                                % (u, u)).encode(), None),
                ("/api/users/login", ('{"user":{"email":"%s","email":"x@y.z","password":"%s"}}'
                                      % (self.user["email"], self.password)).encode(), None),
                ("/api/articles", b'{"article":{"title":"a","title":"b","description":"d","body":"b"}}', self.token),
                (self.slug_path + "/comments", b'{"comment":{"body":"a","body":"b"}}', self.token)):
            self.errors(self.call("POST", path, raw=raw, token=token), 400)
        self.assert_unchanged()

    def test_nul_escape_rejected(self):
        u = unique("nul")
        for path, raw, token in (
                ("/api/users", ('{"user":{"username":"%s\\u0000x","email":"%s@x.org","password":"pass-word"}}'
                                % (u, u)).encode(), None),
                ("/api/users", ('{"user":{"username":"%s","email":"%s@x.org","password":"p\\u0000w"}}'
                                % (u, u)).encode(), None),
                ("/api/users/login", ('{"user":{"email":"%s\\u0000","password":"%s"}}'
                                      % (self.user["email"], self.password)).encode(), None),
                ("/api/articles", b'{"article":{"title":"a\\u0000b","description":"d","body":"b"}}', self.token),
                ("/api/articles", b'{"article":{"title":"a","description":"d","body":"b","tagList":["x\\u0000"]}}',
                 self.token),
                (self.slug_path + "/comments", b'{"comment":{"body":"\\u0000"}}', self.token)):
            r = self.call("POST", path, raw=raw, token=token)
            self.assertIn(r.status, (400, 422), str(r))
        r = self.call("PUT", "/api/user", raw=b'{"user":{"bio":"x\\u0000y"}}', token=self.token)
        self.assertIn(r.status, (400, 422), str(r))
        self.assert_unchanged()

    def test_content_type_and_method(self):
        doc = b'{"article":{"title":"t","description":"d","body":"b"}}'
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                      "application/xml"):
            r = self.call("POST", "/api/articles", raw=doc, token=self.token, headers={"Content-Type": ctype})
            self.errors(r, 415)
        self.assert_unchanged()
        r = self.call("POST", "/api/articles", raw=doc, token=self.token,
                      headers={"Content-Type": "application/json; charset=utf-8"}, expect=201)
        self.call("DELETE", "/api/articles/" + q(r.json["article"]["slug"]), token=self.token, expect=204)
        for method, path in (("PATCH", "/api/user"), ("DELETE", "/api/tags"), ("PUT", "/api/users/login"),
                             ("PATCH", self.slug_path)):
            r = self.call(method, path, body={}, token=self.token)
            self.errors(r, 405)
        self.assert_unchanged()

    # -- SQL metacharacters

    def test_sql_metacharacters_in_every_parameter(self):
        slug = q(self.article["slug"])
        cid = self.comment["id"]
        for inj in INJECTIONS:
            e = q(inj)
            for param in ("tag", "author", "favorited"):
                r = self.call("GET", "/api/articles?%s=%s" % (param, e), expect=200)
                self.assertEqual((r.json["articles"], r.json["articlesCount"]), ([], 0), str(r))
            for param in ("limit", "offset"):
                self.errors(self.call("GET", "/api/articles?%s=%s" % (param, e)), 422, param)
                self.errors(self.call("GET", "/api/articles/feed?%s=%s" % (param, e), token=self.token), 422, param)
            self.errors(self.call("GET", "/api/profiles/" + e), 404)
            self.errors(self.call("POST", "/api/profiles/%s/follow" % e, token=self.token), 404)
            self.errors(self.call("DELETE", "/api/profiles/%s/follow" % e, token=self.token), 404)
            self.errors(self.call("GET", "/api/articles/" + e), 404)
            self.errors(self.call("PUT", "/api/articles/" + e, {"article": {"title": "x"}}, token=self.token), 404)
            self.errors(self.call("DELETE", "/api/articles/" + e, token=self.token), 404)
            self.errors(self.call("POST", "/api/articles/%s/favorite" % e, token=self.token), 404)
            self.errors(self.call("DELETE", "/api/articles/%s/favorite" % e, token=self.token), 404)
            self.errors(self.call("GET", "/api/articles/%s/comments" % e), 404)
            self.errors(self.call("POST", "/api/articles/%s/comments" % e, {"comment": {"body": "x"}},
                                  token=self.token), 404)
            self.errors(self.call("DELETE", "/api/articles/%s/comments/%d" % (e, cid), token=self.token), 404)
            r = self.call("DELETE", "/api/articles/%s/comments/%s" % (slug, e), token=self.token)
            self.assertIn(r.status, (404, 422), str(r))
            r = self.call("DELETE", "/api/articles/%s/comments/%s" % (slug, q("%d OR 1=1" % cid)), token=self.token)
            self.assertIn(r.status, (404, 422), str(r))
            self.errors(self.call("GET", "/api/user", headers={"Authorization": "Token " + inj}), 401, "token")
            self.errors(self.call("GET", "/api/articles", headers={"Authorization": "Token " + inj}), 401, "token")
            r = self.login(inj, inj, expect=(401, 422))
            r = self.login(self.user["email"], inj, expect=401)
            r = self.login(self.user["email"] + inj, self.password, expect=(401, 422))
        self.assert_unchanged()
        for table in ("users", "articles", "comments", "favorites", "follows", "sessions", "tags"):
            self.assertEqual(self.scalar("SELECT to_regclass(%s) IS NOT NULL" % sql_lit(table)), "t", table)

    def test_sql_metacharacters_are_stored_verbatim(self):
        name = "' OR 1=1 --" + unique("")[-6:]
        email = '";DROP_TABLE_users;--%s\'@example.com' % unique("")[-6:]  # no blanks: those are invalid
        password = "' OR '1'='1"
        user, token, _ = self.register(username=name, email=email, password=password)
        self.assertEqual((user["username"], user["email"]), (name, email))
        self.assertEqual(self.rows("SELECT username, email FROM users WHERE username = %s" % sql_lit(name)),
                         [[name, email]])
        self.login(email, password, expect=200)
        self.login(email, "' OR '1'='1' --", expect=401)
        p = self.call("GET", "/api/profiles/" + q(name), expect=200).json["profile"]
        self.assertEqual(p["username"], name)
        tag = "'; DELETE FROM tags; --"
        title = "Robert'); DROP TABLE articles;--"
        a = self.create_article(token, title=title, description="' OR 1=1 --", body='"; DROP TABLE users; --',
                                tagList=[tag, "%"])
        self.assertEqual((a["title"], a["description"], a["body"], a["tagList"]),
                         (title, "' OR 1=1 --", '"; DROP TABLE users; --', ["%", tag]))  # byte order
        self.assertEqual(self.rows("SELECT title, description, body FROM articles WHERE slug = %s" % sql_lit(a["slug"])),
                         [[title, "' OR 1=1 --", '"; DROP TABLE users; --']])
        for params in ({"tag": tag}, {"tag": "%"}, {"author": name}):
            doc = self.list_articles(**params).json
            self.assertEqual([x["slug"] for x in doc["articles"]], [a["slug"]], params)
        doc = self.list_articles(tag="target").json
        self.assertEqual([x["slug"] for x in doc["articles"]], [self.article["slug"]])
        c = self.call("POST", "/api/articles/%s/comments" % q(a["slug"]), {"comment": {"body": "1'; --"}},
                      token=token, expect=201).json["comment"]
        self.assertEqual(self.scalar("SELECT body FROM comments WHERE id = %d" % c["id"]), "1'; --")
        self.call("PUT", "/api/user", {"user": {"bio": "' || (SELECT 1) || '"}}, token=token, expect=200)
        self.assertEqual(self.scalar("SELECT bio FROM users WHERE username = %s" % sql_lit(name)), "' || (SELECT 1) || '")
        # everyone else is untouched
        self.assertEqual(self.sql("SELECT id, username, email, password_hash, bio, image FROM users"
                                  " WHERE username <> %s ORDER BY id" % sql_lit(name)), self.users_before)
        self.assertEqual(self.count("tags", "name = 'target'"), 1)
        self.call("DELETE", "/api/articles/" + q(a["slug"]), token=token, expect=204)

    # -- path parameters

    def test_odd_path_parameters_404(self):
        slug = self.article["slug"]
        uname = self.user["username"]
        long_slug = "a" * 3000
        for path in ("/api/articles/a%2Fb", "/api/articles/" + q(slug) + "%2F", "/api/articles/%2F" + q(slug),
                     "/api/articles/" + q(slug) + "%2Fcomments", "/api/articles/..%2F..%2Fetc%2Fpasswd",
                     "/api/articles/" + long_slug, "/api/articles/" + long_slug + "/comments",
                     "/api/articles/%s-999999999999" % slug.rsplit("-", 1)[0], "/api/articles/%20",
                     "/api/profiles/a%2Fb", "/api/profiles/" + q(uname) + "%2F", "/api/profiles/" + "u" * 3000,
                     "/api/profiles/%2E%2E%2Fetc%2Fpasswd"):
            with self.subTest(path=path[:120]):
                self.errors(self.call("GET", path), 404)
        for method, path in (("PUT", "/api/articles/a%2Fb"), ("DELETE", "/api/articles/" + long_slug),
                             ("POST", "/api/articles/%s/favorite" % long_slug),
                             ("POST", "/api/profiles/%s/follow" % ("u" * 3000)),
                             ("POST", "/api/articles/a%2Fb/comments")):
            body = {"article": {"title": "x"}} if method == "PUT" else (
                {"comment": {"body": "x"}} if path.endswith("comments") else None)
            with self.subTest(method=method, path=path[:120]):
                self.errors(self.call(method, path, body, token=self.token), 404)
        for path in ("/api/articles/abc%00def", "/api/profiles/%00", "/api/articles/" + q(slug) + "%00"):
            r = self.call("GET", path)
            self.assertIn(r.status, (400, 404), str(r))
        # comment ids that are not ids
        for cid in ("0", "-1", "9223372036854775807", "9223372036854775808", "99999999999999999999", "1e3",
                    "0x1", "%2F", "1%2F2"):
            r = self.call("DELETE", "/api/articles/%s/comments/%s" % (q(slug), cid), token=self.token)
            self.assertIn(r.status, (404, 422), str(r))
        self.assert_unchanged()

    def test_huge_query_values(self):
        for qs in ("limit=" + "9" * 400, "offset=" + "9" * 400, "tag=" + "t" * 5000, "author=" + "a" * 5000,
                   "limit=20&offset=1000000&tag=target", "offset=-0", "limit=%00", "tag=%00", "tag=%FF%FE"):
            r = self.call("GET", "/api/articles?" + qs)
            self.assertIn(r.status, (200, 400, 422), str(r))
            if qs.startswith(("limit=9", "offset=9")):
                self.assertEqual(r.status, 422, str(r))
            if r.status == 200:
                self.assertEqual(r.json["articles"], [], str(r))
        self.assert_unchanged()

    def test_bad_authorization_headers(self):
        for header in ("Token " + "g" * 64, "Token " + "a" * 4000, "Token", "Token " + self.token + " " + self.token,
                       "Token " + self.token[:32], "Token " + self.token.upper() + "!", "Token " + "\u00e9" * 32):
            for method, path in (("GET", "/api/user"), ("GET", "/api/articles"), ("GET", self.slug_path),
                                 ("POST", self.slug_path + "/favorite")):
                r = self.call(method, path, headers={"Authorization": header})
                self.assertIn(r.status, (400, 401), str(r))
        self.assert_unchanged()

    def test_nul_byte_in_header_gets_a_400_and_the_server_lives(self):
        # rejected by libh2o's HTTP parser before any handler runs: docs/board-api.md documents its
        # fixed text/plain 400 as the one non-JSON error; the server must keep serving
        r = self.raw_call("GET", "/api/user", headers={"Authorization": "Token %s\u0000" % self.token[:63]})
        self.assertEqual(r.status, 400, str(r))
        self.assertNotIn(b"SELECT", r.body)
        self.assertEqual(self.raw_call("GET", "/health_check").status, 200)


if __name__ == "__main__":
    unittest.main()
