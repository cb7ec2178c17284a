#!/usr/bin/python3
"""--cors-origin over HTTP (docs/board-api.md, "CORS"; README.md's flag table).

A list of origins: a preflight (OPTIONS with Origin and Access-Control-Request-Method) from a listed
origin to an /api route is 204 with the route's methods, Authorization and Content-Type allowed and
a max age; every /api answer, errors included (404, 405, 401, 422, 413), carries
Access-Control-Allow-Origin with the request's origin, and Vary: Origin; an origin not in the list
gets no Access-Control-* header, and its preflight is the 405 it always was. `*`: every /api answer
carries Access-Control-Allow-Origin: *. Without the flag nothing changes. Paths outside /api never
carry CORS headers. Startup refuses a list that is not one (exit 2, the flag named).
"""

import unittest

from boardlib import BoardCase
from sutlab_testlib import assert_usage_error, build_request, header_tokens

FRONT = "http://127.0.0.1:5173"
OTHER_FRONT = "https://app.example.org"
STRANGER = "http://127.0.0.1:5174"


def cors_headers(r):
    return {k: v for k, v in r.headers.items() if k.startswith("access-control-")}


class CorsCase(BoardCase):
    def preflight(self, path, origin, method="POST", headers="authorization,content-type"):
        hdrs = {"Origin": origin, "Access-Control-Request-Method": method}
        if headers:
            hdrs["Access-Control-Request-Headers"] = headers
        return self.call("OPTIONS", path, headers=hdrs)

    def get(self, path, origin=None, **kw):
        return self.call("GET", path, headers={"Origin": origin} if origin else None, **kw)


class ListedOrigins(CorsCase):
    EXTRA_ARGS = ("--cors-origin", "%s, %s:443" % (FRONT, OTHER_FRONT.upper().replace("HTTPS", "https")))

    def assert_allowed(self, r, origin):
        self.assertEqual(r.headers.get("access-control-allow-origin"), origin, str(r))
        self.assertIn("origin", header_tokens(r.headers.get("vary")), str(r))

    def test_preflight_from_a_listed_origin(self):
        for path, methods in (("/api/articles", {"GET", "POST"}), ("/api/articles/some-slug", {"GET", "PUT", "DELETE"}),
                              ("/api/user", {"GET", "PUT"}), ("/api/articles/x/comments/7", {"DELETE"})):
            r = self.preflight(path, FRONT)
            self.assertEqual(r.status, 204, str(r))
            self.assertEqual(r.body, b"")
            self.assert_allowed(r, FRONT)
            self.assertEqual(header_tokens(r.headers.get("access-control-allow-methods")), {m.lower() for m in methods},
                             path)
            self.assertEqual(header_tokens(r.headers.get("access-control-allow-headers")),
                             {"authorization", "content-type"})
            self.assertGreater(int(r.headers.get("access-control-max-age")), 0)
        # the second origin, written in the list with its default port and in capitals
        r = self.preflight("/api/articles", OTHER_FRONT, method="GET", headers=None)
        self.assertEqual(r.status, 204, str(r))
        self.assert_allowed(r, OTHER_FRONT)

    def test_preflight_from_another_origin_is_what_it_was(self):
        for origin in (STRANGER, "null", FRONT + "/", "http://127.0.0.1", "https://127.0.0.1:5173"):
            r = self.preflight("/api/articles", origin)
            self.errors(r, 405, "method")
            self.assertEqual(header_tokens(r.headers.get("allow")), {"get", "head", "post"})
            self.assertEqual(cors_headers(r), {}, origin)

    def test_options_that_is_no_preflight(self):
        r = self.call("OPTIONS", "/api/articles", headers={"Origin": FRONT})  # no Access-Control-Request-Method
        self.errors(r, 405, "method")
        self.assertNotIn("access-control-allow-methods", r.headers)
        r = self.call("OPTIONS", "/api/articles")
        self.errors(r, 405, "method")

    def test_answers_carry_the_origin(self):
        r = self.get("/api/tags", FRONT, expect=200)
        self.assert_allowed(r, FRONT)
        self.assertIn("x-total-count-kind", header_tokens(r.headers.get("access-control-expose-headers")))
        r = self.get("/api/articles", OTHER_FRONT, expect=200)
        self.assert_allowed(r, OTHER_FRONT)
        _, token, _ = self.register()
        r = self.call("GET", "/api/user", token=token, headers={"Origin": FRONT}, expect=200)
        self.assert_allowed(r, FRONT)

    def test_errors_carry_the_origin(self):
        for method, path, status in (("GET", "/api/no-such-route", 404), ("PATCH", "/api/articles", 405),
                                     ("GET", "/api/user", 401), ("GET", "/api/articles?limit=0", 422),
                                     ("GET", "/api/articles/no-such-article", 404)):
            r = self.call(method, path, headers={"Origin": FRONT})
            self.errors(r, status)
            self.assert_allowed(r, FRONT)

    def test_an_answer_made_by_libh2o_carries_it_too(self):
        head = build_request("POST", "/api/users", headers={"Origin": FRONT, "Content-Type": "application/json",
                                                            "Content-Length": str(2 << 20)})
        with self.server.raw_conn(timeout=10) as conn:
            conn.send(head)
            rr = conn.read_response()
        self.assertEqual(rr.status, 413, rr)
        self.assertEqual(rr.headers.get("access-control-allow-origin"), FRONT, rr)

    def test_no_cors_headers_for_others(self):
        for origin in (None, STRANGER, "null"):
            r = self.get("/api/tags", origin, expect=200)
            self.assertEqual(cors_headers(r), {}, origin)
            self.assertIn("origin", header_tokens(r.headers.get("vary")), "the answer depends on Origin")
        r = self.get("/api/no-such-route", STRANGER)
        self.errors(r, 404)
        self.assertEqual(cors_headers(r), {})

    def test_not_outside_api(self):
        for path in ("/health_check", "/status.txt", "/apis", "/stores?categoryId=1"):
            r = self.raw_call("GET", path, headers={"Origin": FRONT})
            self.assertEqual(cors_headers(r), {}, path)
            self.assertNotIn("origin", header_tokens(r.headers.get("vary")), path)


class AnyOrigin(CorsCase):
    EXTRA_ARGS = ("--cors-origin", "*")

    def test_every_api_answer_says_star(self):
        for origin in (FRONT, STRANGER, None):
            r = self.get("/api/tags", origin, expect=200)
            self.assertEqual(r.headers.get("access-control-allow-origin"), "*", origin)
            self.assertNotIn("origin", header_tokens(r.headers.get("vary")))
        r = self.get("/api/no-such-route", STRANGER)
        self.errors(r, 404)
        self.assertEqual(r.headers.get("access-control-allow-origin"), "*")

    def test_preflight_from_anywhere(self):
        r = self.preflight("/api/users/login", STRANGER)
        self.assertEqual(r.status, 204, str(r))
        self.assertEqual(r.headers.get("access-control-allow-origin"), "*")
        self.assertEqual(header_tokens(r.headers.get("access-control-allow-methods")), {"post"})


class NoFlag(CorsCase):
    def test_nothing_changes(self):
        r = self.get("/api/tags", FRONT, expect=200)
        self.assertEqual(cors_headers(r), {})
        self.assertNotIn("origin", header_tokens(r.headers.get("vary")))
        r = self.preflight("/api/articles", FRONT)
        self.errors(r, 405, "method")
        self.assertEqual(cors_headers(r), {})


class BadLists(unittest.TestCase):
    def test_refused_at_start(self):
        for value in ("", "null", "http://a.test/", "*,http://a.test", "http://a.test,,http://b.test",
                      "http://a.test:99999", "a.test"):
            with self.subTest(value=value):
                msg = assert_usage_error(self, ["serve", "--listen", "127.0.0.1:1", "--cors-origin", value])
                self.assertIn("--cors-origin", msg)


if __name__ == "__main__":
    unittest.main()
